"""The environment document: closed schema, strict reading, errors naming the field."""

from __future__ import annotations

import hashlib

import pytest

from prover.environment import EnvironmentLoadError, load_environment

STANDARD = """\
version: 1
workdir: /sandbox
user: sandbox
users: {root: 0, sandbox: 1000}
groups: {root: 0, sandbox: 1000}
symlinks: {/bin: usr/bin, /lib: usr/lib, /sbin: usr/sbin, /lib64: usr/lib64}
symlinks_complete_beneath: [/]
primary_gids: {sandbox: 1000}
"""


def test_the_standard_document_reads_with_its_digest() -> None:
    env = load_environment(STANDARD)
    assert env.workdir == "/sandbox"
    assert env.user == "sandbox"
    assert env.users == {"root": 0, "sandbox": 1000}
    assert env.symlinks["/lib64"] == "usr/lib64"
    assert env.complete_beneath == ("/",)
    assert env.sha256 == hashlib.sha256(STANDARD.encode()).hexdigest()


def test_json_reads_the_same() -> None:
    text = '{"version": 1, "workdir": "/w", "users": {"a": 5}}'
    env = load_environment(text)
    assert (env.workdir, env.users) == ("/w", {"a": 5})


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("version: 1\nworkdirs: /x\n", "workdirs", "unknown field 'workdirs'"),
        ("version: 2\n", "version", "must be 1"),
        ("workdir: /x\n", "version", "missing required field 'version'"),
        ("version: 1\nworkdir: sandbox\n", "workdir", "absolute path"),
        ("version: 1\nworkdir: /a/../b\n", "workdir", "'..'"),
        ("version: 1\nusers: {a: -1}\n", "users.a", "at least 0"),
        ("version: 1\nusers: {a: '1'}\n", "users.a", "must be an integer"),
        ("version: 1\ngroups: {a: 4294967295}\n", "groups.a", "at most"),
        ("version: 1\nsymlinks: {bin: usr/bin}\n", "symlinks.bin", "absolute path"),
        ("version: 1\nsymlinks: {/: x}\n", "symlinks./", "must not be '/'"),
        (
            "version: 1\nsymlinks_complete_beneath: [/a/]\n",
            "symlinks_complete_beneath[0]",
            "canonical",
        ),
        ("version: 1\nuser: 'a:b'\n", "user", "name or a decimal id"),
        ("version: 1\nversion: 1\n", "version", "duplicate key"),
        ("", "", "empty"),
        ("- 1\n", "", "mapping"),
    ],
)
def test_bad_documents_name_the_field(text: str, field: str, words: str) -> None:
    with pytest.raises(EnvironmentLoadError) as caught:
        load_environment(text)
    assert words in str(caught.value)
    assert str(caught.value).startswith("invalid environment: ")
    if field:
        assert caught.value.path == field


def test_a_document_over_the_symlink_limit_is_refused() -> None:
    links = ", ".join(f"/l{i}: x" for i in range(10_001))
    with pytest.raises(EnvironmentLoadError):
        load_environment(f"version: 1\nsymlinks: {{{links}}}\n")

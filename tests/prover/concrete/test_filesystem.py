"""Filesystem evaluation of spec §8.1: exact paths, ``/`` and the workdir."""

from __future__ import annotations

import pytest

from prover.concrete.filesystem import filesystem_allows, path_is_covered
from prover.policy.model import Filesystem, FilesystemAction, Policy


def fs_policy(
    read_only: tuple[str, ...] = (), read_write: tuple[str, ...] = (), workdir: bool = False
) -> Policy:
    return Policy(filesystem=Filesystem(workdir, read_only, read_write))


@pytest.mark.parametrize(
    ("path", "entries", "expected"),
    [
        ("/tmp", ("/tmp",), True),
        ("/tmp/cache", ("/tmp",), False),
        ("/safe-prefix", ("/safe",), False),
        ("/safe", ("/safe/link",), False),
        ("/anything/at/all", ("/",), True),
        ("/", ("/",), True),
        ("/tmp", (), False),
        ("/tmp", ("/usr", "/tmp"), True),
    ],
)
def test_a_path_is_covered_only_by_itself_or_the_root(
    path: str, entries: tuple[str, ...], expected: bool
) -> None:
    assert path_is_covered(path, entries) is expected


@pytest.mark.parametrize(
    ("access", "path", "expected"),
    [
        ("read", "/usr", True),
        ("write", "/usr", False),
        ("read", "/tmp", True),
        ("write", "/tmp", True),
        ("read", "/tmp/x", False),
        ("write", "/usr/lib", False),
        ("read", "/etc", False),
    ],
)
def test_writes_come_from_read_write_and_reads_from_both_lists(
    access: str, path: str, expected: bool
) -> None:
    policy = fs_policy(read_only=("/usr",), read_write=("/tmp",))
    action = FilesystemAction(access=access, path=path)  # type: ignore[arg-type]
    assert filesystem_allows(policy, action) is expected


def test_root_in_read_only_grants_every_read_but_no_write() -> None:
    policy = fs_policy(read_only=("/",))
    assert filesystem_allows(policy, FilesystemAction("read", "/etc/shadow"))
    assert not filesystem_allows(policy, FilesystemAction("write", "/etc/shadow"))


def test_include_workdir_grants_the_given_workdir_read_write() -> None:
    with_workdir = fs_policy(workdir=True)
    without = fs_policy(workdir=False)
    write = FilesystemAction("write", "/sandbox")
    read = FilesystemAction("read", "/sandbox")
    assert filesystem_allows(with_workdir, write, workdir="/sandbox")
    assert filesystem_allows(with_workdir, read, workdir="/sandbox")
    assert not filesystem_allows(with_workdir, write, workdir="/elsewhere")
    assert not filesystem_allows(with_workdir, write)
    assert not filesystem_allows(without, write, workdir="/sandbox")


def test_unknown_access_is_rejected() -> None:
    with pytest.raises(ValueError):
        filesystem_allows(fs_policy(("/",)), FilesystemAction("exec", "/"))  # type: ignore[arg-type]

"""The package entry point ``allows`` dispatches on the action kind."""

from __future__ import annotations

import ast
import ipaddress
from pathlib import Path

import pytest

import prover.concrete
from prover.concrete import allows
from prover.policy.model import Endpoint, Filesystem, FilesystemAction, NetworkAction, Policy, Rule

POLICY = Policy(
    filesystem=Filesystem(True, ("/usr",), ("/tmp",)),
    rules=(
        Rule(
            key="api",
            name="api",
            binaries=("/usr/bin/curl",),
            endpoints=(Endpoint(index=0, host="api.example.com", ports=(443,), layer="l4"),),
        ),
    ),
)


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (FilesystemAction("read", "/usr"), True),
        (FilesystemAction("write", "/usr"), False),
        (NetworkAction("api.example.com", 443, ipaddress.ip_address("8.8.8.8")), True),
        (NetworkAction("api.example.com", 80, ipaddress.ip_address("8.8.8.8")), False),
        (NetworkAction("api.example.com", 443, ipaddress.ip_address("127.0.0.1")), False),
    ],
)
def test_allows_dispatches_on_the_action_kind(
    action: FilesystemAction | NetworkAction, expected: bool
) -> None:
    assert allows(POLICY, action) is expected


def test_allows_passes_the_workdir_to_filesystem_actions() -> None:
    assert allows(POLICY, FilesystemAction("write", "/sandbox"), workdir="/sandbox")
    assert not allows(POLICY, FilesystemAction("write", "/sandbox"))


def test_allows_rejects_other_objects() -> None:
    with pytest.raises(TypeError):
        allows(POLICY, "read /usr")  # type: ignore[arg-type]


def test_the_evaluator_imports_neither_z3_nor_a_regex_or_fnmatch_engine() -> None:
    package = Path(prover.concrete.__file__).parent
    for source in package.glob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        assert not imported & {"z3", "re", "fnmatch", "regex", "glob"}, source.name

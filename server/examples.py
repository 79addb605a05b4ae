"""The bundled example policies (package data under ``server/data/examples``).

``index.json`` names each example, its role (``boundary`` or ``candidate``), what it
shows and, for candidates, the result the check gives against the boundary example.
The demo and the example resources read them from here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

_PACKAGE = "server"
_DIRECTORY = ("data", "examples")


@dataclass(frozen=True)
class Example:
    name: str
    file: str
    role: str
    description: str
    expect: dict[str, Any] | None

    @property
    def text(self) -> str:
        return _directory().joinpath(self.file).read_text(encoding="utf-8")


def _directory() -> Any:
    node = resources.files(_PACKAGE)
    for part in _DIRECTORY:
        node = node.joinpath(part)
    return node


@cache
def _index() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        _directory().joinpath("index.json").read_text(encoding="utf-8")
    )
    return loaded


def examples() -> list[Example]:
    """Every example, in index order."""
    return [
        Example(
            name=entry["name"],
            file=entry["file"],
            role=entry["role"],
            description=entry["description"],
            expect=entry.get("expect"),
        )
        for entry in _index()["examples"]
    ]


def example(name: str) -> Example | None:
    return next((e for e in examples() if e.name == name), None)


def boundary_example() -> Example:
    """The example every candidate example is meant to be checked against."""
    found = example(_index()["boundary"])
    assert found is not None, "index.json names a boundary example that does not exist"
    return found


def candidate_examples() -> list[Example]:
    return [e for e in examples() if e.role == "candidate"]

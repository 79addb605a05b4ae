"""A fix option: edits to the working candidate, the document they produce, and a label."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from prover.explain.document import Data, Edit

FixKind = Literal["narrow", "remove", "align"]


@dataclass
class Option:
    kind: FixKind
    description: str
    edits: list[Edit]
    data: Data
    units: int = 0
    notes: list[str] = field(default_factory=list)
    #: Endpoints the narrowing proof compares against besides the working candidate's
    #: (rule key, endpoint): a wildcard endpoint of the candidate with the boundary's
    #: exact host, which may also reach private addresses the wildcard cannot.
    exact_hosts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class Rejection:
    description: str
    reason: str

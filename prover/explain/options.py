"""A fix option: edits to the working candidate, the document they produce, and a label."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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


@dataclass
class Rejection:
    description: str
    reason: str

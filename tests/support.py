"""Shared test helpers: the acceptance case files copied from the specification."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).parent / "data"

#: Boundary cases whose expectation we believe is wrong, with the reason. They stay in
#: the table as strict xfails so a change in either direction is noticed.
DISPUTED: dict[str, str] = {}


@cache
def boundary_cases() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load((DATA / "boundary_cases.yaml").read_text(encoding="utf-8")))


@cache
def proposal_cases() -> tuple[Any, ...]:
    data = yaml.safe_load((DATA / "proposal_cases.yaml").read_text(encoding="utf-8"))
    return tuple(data if isinstance(data, list) else data.get("cases", []))

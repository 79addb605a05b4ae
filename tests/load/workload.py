"""What the load runs send: fast checks from tests/data, a slow pair, and the call plan.

Fast checks are the boundary cases of tests/data/boundary_cases.yaml that decide in
milliseconds in-process. The slow check is tests/load/slow_pair.yaml, which keeps Z3
busy until its ``timeout_ms``; :func:`calibrate_slow_pair` says whether it still does
(the solver is being improved, and a pair that stops being slow must be replaced).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from prover.api import check_boundary
from prover.results import Verdict
from tests.support import boundary_cases

SLOW_PAIR_FILE = Path(__file__).parent / "slow_pair.yaml"
#: A case is "fast" when it decides in-process within this many milliseconds. Every case
#: of tests/data decides in well under 100 ms on an idle machine; the margin keeps the set
#: (and so the plan) the same on a busy one.
FAST_MS = 500.0
TRIVIAL = ("version: 1\n", "version: 1\n")


@dataclass(frozen=True)
class Call:
    kind: str  # "fast" or "slow"
    candidate: str
    boundary: str
    timeout_ms: int

    @property
    def arguments(self) -> dict[str, object]:
        return {
            "candidate": self.candidate,
            "boundary": self.boundary,
            "timeout_ms": self.timeout_ms,
        }


@cache
def slow_pair() -> tuple[str, str]:
    data = yaml.safe_load(SLOW_PAIR_FILE.read_text(encoding="utf-8"))
    return data["candidate"], data["boundary"]


@dataclass(frozen=True)
class Calibration:
    timeout_ms: int
    elapsed_ms: float
    result: str
    reason_code: str | None

    @property
    def slow(self) -> bool:
        """Z3 was still busy at the deadline: the check ran (nearly) its whole budget."""
        return self.result == "inconclusive" and self.elapsed_ms >= 0.9 * self.timeout_ms


def calibrate_slow_pair(timeout_ms: int = 1000) -> Calibration:
    candidate, boundary = slow_pair()
    started = time.perf_counter()
    outcome = check_boundary(candidate, boundary, timeout_ms=timeout_ms).outcome
    elapsed = (time.perf_counter() - started) * 1000.0
    code = outcome.reason_code.value if outcome.reason_code else None
    return Calibration(timeout_ms, round(elapsed, 1), outcome.verdict.value, code)


@cache
def fast_pairs(limit_ms: float = FAST_MS, cases: int | None = None) -> tuple[tuple[str, str], ...]:
    """Boundary cases of tests/data (the first ``cases``) that decide within ``limit_ms``."""
    pairs = []
    for case in boundary_cases()[:cases]:
        candidate, boundary = case.get("candidate"), case.get("boundary")
        if not isinstance(candidate, str) or not isinstance(boundary, str):
            continue
        started = time.perf_counter()
        outcome = check_boundary(candidate, boundary, timeout_ms=5000).outcome
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        if elapsed_ms <= limit_ms and outcome.verdict is not Verdict.INCONCLUSIVE:
            pairs.append((candidate, boundary))
    return tuple(pairs)


def plan(
    clients: int,
    calls: int,
    slow_share: float,
    fast_timeout_ms: int,
    slow_timeout_ms: tuple[int, int],
    seed: int = 1,
    cases: int | None = None,
) -> list[list[Call]]:
    """``calls`` calls dealt round-robin to ``clients`` clients, in a seeded random order."""
    rng = random.Random(seed)
    fast = fast_pairs(cases=cases)
    slow_candidate, slow_boundary = slow_pair()
    slow_count = round(calls * slow_share)
    every: list[Call] = [
        Call("slow", slow_candidate, slow_boundary, rng.randint(*slow_timeout_ms))
        for _ in range(slow_count)
    ]
    every += [Call("fast", *rng.choice(fast), fast_timeout_ms) for _ in range(calls - slow_count)]
    rng.shuffle(every)
    return [every[index::clients] for index in range(clients)]

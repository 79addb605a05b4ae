"""Every acceptance case of the boundary check, through the library."""

from __future__ import annotations

from typing import Any

import pytest

from prover.api import check_boundary
from prover.concrete.witness import replays
from prover.policy.loader import load_policy
from prover.policy.normalize import normalize
from prover.results import Verdict
from prover.results.report import counterexample_line
from tests.support import DISPUTED, boundary_cases


def _params() -> list[Any]:
    params = []
    for case in boundary_cases():
        marks = []
        if case["id"] in DISPUTED:
            marks.append(pytest.mark.xfail(strict=True, reason=DISPUTED[case["id"]]))
        params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


@pytest.mark.parametrize("case", _params())
def test_boundary_case_gives_the_expected_result(case: dict[str, Any]) -> None:
    outcome = check_boundary(case["candidate"], case["boundary"], reference_semantics=True).outcome
    expect = case["expect"]
    assert outcome.verdict.value == expect["result"], outcome.reason
    if "reason_code" in expect:
        assert outcome.reason_code is not None
        assert outcome.reason_code.value == expect["reason_code"]
    if outcome.verdict is Verdict.EXCEEDS:
        assert outcome.counterexample is not None
        candidate = normalize(load_policy(case["candidate"]))
        boundary = normalize(load_policy(case["boundary"]))
        assert replays(candidate, boundary, outcome.counterexample)
        wanted = expect.get("counterexample_contains", [])
        line = counterexample_line(outcome.counterexample)
        missing = [w for w in wanted if w not in line]
        # A different witness is acceptable only because it replayed above; record which.
        if missing:
            print(f"{case['id']}: different witness {line!r}, missing {missing}")

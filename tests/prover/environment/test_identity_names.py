"""Identity names the evidence lists (``users``/``groups``) are read, in both semantics."""

from __future__ import annotations

import pytest

from prover.api import check_boundary
from prover.environment.document import load_environment
from prover.results import Verdict

ENV = load_environment(
    "version: 1\nworkdir: /sandbox\nuser: sandbox\n"
    "users: {root: 0, sandbox: 1000, agent: 1001}\n"
    "groups: {root: 0, sandbox: 1000, agent: 1001}\n"
)


def policy(user: str) -> str:
    return f"version: 1\nprocess: {{run_as_user: '{user}', run_as_group: sandbox}}\n"


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize(
    ("candidate", "boundary", "expected"),
    [
        ("1001", "agent", Verdict.WITHIN),
        ("agent", "1001", Verdict.WITHIN),
        ("agent", "sandbox", Verdict.EXCEEDS),
        ("agent", "root", Verdict.WITHIN),
    ],
)
def test_a_listed_name_is_its_number(
    candidate: str, boundary: str, expected: Verdict, reference: bool
) -> None:
    outcome = check_boundary(
        policy(candidate), policy(boundary), environment=ENV, reference_semantics=reference
    ).outcome
    assert outcome.verdict is expected, outcome


def test_without_evidence_a_name_stays_unsupported() -> None:
    outcome = check_boundary(policy("agent"), policy("1001")).outcome
    assert outcome.verdict is Verdict.UNSUPPORTED
    assert "agent" in (outcome.reason or "")

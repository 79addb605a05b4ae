"""Identity names the evidence lists (``users``/``groups``) are read by the reference
semantics; by default a name other than ``sandbox`` is an error, since the runtime refuses
it (``is_valid_sandbox_identity``, openshell-policy lib.rs)."""

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


@pytest.mark.parametrize("reference", [True])
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
    outcome = check_boundary(policy("agent"), policy("1001"), reference_semantics=True).outcome
    assert outcome.verdict is Verdict.UNSUPPORTED
    assert "agent" in (outcome.reason or "")


@pytest.mark.parametrize("environment", [None, ENV])
def test_by_default_a_name_is_an_error_the_runtime_refuses(environment: object) -> None:
    outcome = check_boundary(policy("agent"), policy("1001"), environment=environment).outcome
    assert outcome.verdict is Verdict.ERROR
    assert "run_as_user must be 'sandbox' or a numeric UID/GID" in (outcome.reason or "")
    assert "got 'agent'" in (outcome.reason or "")

"""The extended analysis on every acceptance case: it never contradicts the reference.

The reference verdicts are checked exactly in ``tests/prover/checks/test_boundary_cases.py``
(with ``reference_semantics=True``). By default the prover may decide more, but:

* a reference ``within_boundary`` stays within, and a reference ``exceeds_boundary``
  stays an exceed whose witness the candidate surely allows and the boundary surely
  refuses (replayed through the bounds of both readings);
* a reference ``error`` stays an error unless the mainline parser accepts the input;
* nothing the reference decides becomes ``unsupported``, ``inconclusive`` or ``error``.
"""

from __future__ import annotations

from typing import Any

import pytest

from prover.api import check_boundary
from prover.extended.check import witness_is_real
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.results import NetworkCounterexample, Verdict
from prover.witness import replays
from tests.support import boundary_cases

#: Inputs the reference refuses and the mainline runtime parser accepts.
MAINLINE_ACCEPTS = {"cli-schema-error-null-filesystem-candidate"}

#: Cases whose verdict the runtime's reading changes (the effective policy, issue 22),
#: with the verdict it gives and the runtime fact it rests on.
RUNTIME_READING = {
    # The boundary's filesystem lists are empty: landlock.rs prepare_with_path_open_mode
    # builds no ruleset, so the boundary may write /tmp too; the identity change stays
    # unresolved without evidence.
    "proc-unresolved-user-does-not-mask-fs-expansion": Verdict.UNSUPPORTED,
}


def _params() -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in boundary_cases()]


@pytest.mark.parametrize("case", _params())
def test_extended_agrees_with_every_reference_decision(case: dict[str, Any]) -> None:
    reference = check_boundary(case["candidate"], case["boundary"], reference_semantics=True)
    extended = check_boundary(case["candidate"], case["boundary"])
    assert extended.receipt.semantics == "extended"
    assert reference.receipt.semantics == "reference"
    expected = reference.outcome.verdict
    got = extended.outcome.verdict
    if case["id"] in RUNTIME_READING:
        assert got is RUNTIME_READING[case["id"]], extended.outcome.reason
        return
    if expected is Verdict.ERROR:
        if case["id"] in MAINLINE_ACCEPTS:
            assert got is not Verdict.ERROR
        else:
            assert got is Verdict.ERROR
            assert extended.outcome.reason == reference.outcome.reason
        return
    if expected in (Verdict.WITHIN, Verdict.EXCEEDS):
        assert got is expected, extended.outcome.reason
    assert got is not Verdict.ERROR
    if got is Verdict.EXCEEDS:
        _assert_witness_is_real(case, extended.outcome.counterexample)


def _assert_witness_is_real(case: dict[str, Any], counterexample: object) -> None:
    candidate, boundary = load_policy(case["candidate"]), load_policy(case["boundary"])
    if not isinstance(counterexample, NetworkCounterexample):
        # Filesystem, process and Landlock are read exactly: any bound replays them.
        assert replays(read_policy(candidate).lower, read_policy(boundary).lower, counterexample)
        return
    assert witness_is_real(read_policy(candidate), read_policy(boundary), counterexample)

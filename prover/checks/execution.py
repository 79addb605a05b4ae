"""Process identity (spec §6) and Landlock (spec §7): compared as configuration only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prover.policy.model import Policy
from prover.results import (
    CheckOutcome,
    LandlockCounterexample,
    ProcessCounterexample,
    ReasonCode,
)

if TYPE_CHECKING:
    from prover.environment.evidence import Evidence


def _is_root(value: str) -> bool:
    return value in ("root", "0")


def check_process(
    candidate: Policy, boundary: Policy, evidence: Evidence | None = None
) -> CheckOutcome | None:
    """An exceed, a (deferred) unsupported outcome, or None when the identities agree.

    Every field is compared for an escalation to root before any unresolved change is
    reported, so an unresolved ``run_as_group`` cannot hide a root ``run_as_user``.
    With ``evidence``, identities resolve to numbers: root contains every identity, the
    same number is the same identity, different non-root numbers exceed.
    """
    fields = (
        ("run_as_user", boundary.run_as_user, candidate.run_as_user),
        ("run_as_group", boundary.run_as_group, candidate.run_as_group),
    )
    unresolved: CheckOutcome | None = None
    for field, bound, cand in fields:
        if bound == cand or (_is_root(bound) and _is_root(cand)):
            continue
        if bound and not _is_root(bound) and _is_root(cand):
            return CheckOutcome.exceeds(
                ProcessCounterexample(field=field, boundary=bound, candidate=cand),
                decided_by="process",
            )
        if evidence is not None:
            from prover.environment.apply import identity_decision

            decided = identity_decision(field, bound, cand, evidence)
            if decided is True:
                continue
            if isinstance(decided, ProcessCounterexample):
                return CheckOutcome.exceeds(decided, decided_by="process")
        if unresolved is None:
            unresolved = CheckOutcome.unsupported(
                ReasonCode.UNSUPPORTED_POLICY_SHAPE,
                f"process {field} changes from '{bound}' to '{cand}'; identity resolution "
                "and ordering require execution-environment evidence",
            )
    return unresolved


def check_landlock(
    candidate: Policy, boundary: Policy, evidence: Evidence | None = None
) -> CheckOutcome | None:
    if (
        boundary.landlock_compatibility == "hard_requirement"
        and candidate.landlock_compatibility != "hard_requirement"
    ):
        return CheckOutcome.exceeds(
            LandlockCounterexample(boundary="hard_requirement", candidate="best_effort"),
            decided_by="landlock",
        )
    return None

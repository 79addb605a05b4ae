"""One decision for a proposal assessment, which cannot contradict itself.

``auto_approvable`` is the gateway's reading (empty delta, no security note, no approval
blocker), and beyond the reference it is also false when a boundary was given and the
merged policy is not proved within it. ``decision`` folds every signal into one value:

* ``invalid``: the proposal cannot be applied (``application_error``);
* ``blocked``: never approve (``approval_blockers`` says why): it reaches always-blocked
  destinations, or, beyond the reference, the merged policy is proved to exceed the given
  boundary (no reviewer can approve access beyond the sandbox's maximum policy);
* ``needs_review``: a human must look (unaccepted findings, security notes, or a boundary
  result that is neither ``within_boundary`` nor ``exceeds_boundary``);
* ``accepted``: nothing new needs review, every finding being an accepted risk, but the
  gateway would not auto-approve it;
* ``auto_approvable``: nothing to review and the gateway would auto-approve it.
"""

from __future__ import annotations

from typing import Literal

from prover.proposal.assessment import ProposalAssessment
from prover.proposal.boundary import boundary_exceeded, boundary_failed

#: An agent left out the boundary and read auto_approvable as "allowed" for a new host.
NO_BOUNDARY_WARNING = (
    "no boundary was given: the proposal adds access, and nothing checked that it stays "
    "within the environment's maximum policy; pass it as boundary before approving"
)

Decision = Literal["invalid", "blocked", "needs_review", "accepted", "auto_approvable"]


def decision_of(assessment: ProposalAssessment) -> Decision:
    if assessment.application_error is not None:
        return "invalid"
    if assessment.approval_blockers:
        return "blocked"
    if assessment.needs_review or boundary_failed(assessment):
        return "needs_review"
    if not assessment.auto_approvable:
        return "accepted"
    return "auto_approvable"


def _categories(assessment: ProposalAssessment, accepted: bool) -> str:
    names = [f.category.value for f in assessment.findings if f.accepted is accepted]
    return ", ".join(dict.fromkeys(names))


def reason_of(assessment: ProposalAssessment, decision: Decision) -> str:
    """Why the decision is what it is, in one sentence: every signal that set it."""
    if decision == "invalid":
        return f"the proposal cannot be applied: {assessment.application_error}"
    if decision == "blocked":
        return "never approve: " + "; ".join(assessment.approval_blockers)
    if decision == "needs_review":
        why: list[str] = []
        unaccepted = _categories(assessment, accepted=False)
        if unaccepted:
            why.append(f"new findings ({unaccepted})")
        if assessment.security_notes:
            why.append(f"{len(assessment.security_notes)} security note(s)")
        if boundary_failed(assessment):
            document = assessment.boundary or {}
            result = document.get("result")
            reason = document.get("reason")
            why.append(
                f"the merged policy is {result} against the boundary"
                + (f" ({reason})" if reason else "")
                + ", not proved within it"
            )
        return "a human must review: " + ("; ".join(why) or "the gateway's gates")
    if decision == "accepted":
        accepted = _categories(assessment, accepted=True)
        if accepted:
            return f"every new finding is an accepted risk ({accepted}); not auto-approved"
        return "nothing to review, but the gateway would not auto-approve it"
    access = {
        True: "it adds access",
        False: "it adds no access",
        None: "whether it adds access is undecided",
    }[assessment.adds_access]
    within = " and the merged policy is within the boundary" if assessment.boundary else ""
    return f"no new tracked-risk findings and no security notes; {access}{within}"


def decided(assessment: ProposalAssessment) -> ProposalAssessment:
    """``assessment`` with ``decision`` (and its reason) set and ``auto_approvable``
    consistent with it."""
    failed = boundary_failed(assessment)
    update: dict[str, object] = {}
    if failed:
        update["needs_review"] = True
        update["auto_approvable"] = False
    exceeded = boundary_exceeded(assessment)
    if exceeded is not None:
        update["approval_blockers"] = [*assessment.approval_blockers, exceeded]
    if assessment.boundary is None and assessment.adds_access and assessment.merged_policy:
        update["warnings"] = [*assessment.warnings, NO_BOUNDARY_WARNING]
    settled = assessment.model_copy(update=update)
    decision = decision_of(settled)
    return settled.model_copy(
        update={"decision": decision, "decision_reason": reason_of(settled, decision)}
    )

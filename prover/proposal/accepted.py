"""Accepted risks (spec §9): a reviewer's standing decisions, applied to the delta.

Document: ``{accepted_risks: [...]}`` or a bare list; each risk is ``{query, reason,
accepted_by?, binary?, endpoint?}`` where ``query`` is a category name, and ``binary`` /
``endpoint`` (a host, compared exactly) narrow it when non-empty.

Per finding (reference semantics): risks of the finding's category are consulted; a path
is accepted when some risk's binary and endpoint (where set) equal the path's. All paths
accepted → the finding is marked ``accepted`` with the reason of the risk that matched
its last path; some → the finding keeps only its unmatched paths; none → unchanged. The
gateway does not use accepted risks; ``validation_result`` is computed before them.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, StrictStr

from prover.errors import ProposalError
from prover.proposal.fields import parse_model
from prover.proposal.findings import Finding, FindingPath, with_paths
from prover.proposal.reading import read_document


class AcceptedRisk(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    query: StrictStr
    reason: StrictStr = ""
    accepted_by: StrictStr = ""
    binary: StrictStr = ""
    endpoint: StrictStr = ""

    def covers(self, path: FindingPath) -> bool:
        return (not self.binary or self.binary == path.binary) and (
            not self.endpoint or self.endpoint == path.host
        )


class AcceptedRisks(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    accepted_risks: tuple[AcceptedRisk, ...] = ()


def load_accepted_risks(
    data: str | bytes | None, checkpoint: Callable[[], None] | None = None
) -> AcceptedRisks:
    if data is None:
        return AcceptedRisks()
    document = read_document(data, "accepted risks", checkpoint)
    if document is None:
        return AcceptedRisks()
    if isinstance(document, list):
        document = {"accepted_risks": document}
    if not isinstance(document, dict):
        raise ProposalError("accepted risks: expected {accepted_risks: [...]} or a list of risks")
    risks = parse_model(AcceptedRisks, document, "accepted risks")
    # A risk of a category this version does not know is valid and matches nothing
    # (spec §9): a document written for a newer release must not break assessment.
    return risks


def apply_accepted_risks(
    findings: tuple[Finding, ...], risks: AcceptedRisks
) -> tuple[Finding, ...]:
    result: list[Finding] = []
    for finding in findings:
        relevant = [r for r in risks.accepted_risks if r.query == finding.category.value]
        if not relevant:
            result.append(finding)
            continue
        unmatched: list[FindingPath] = []
        reason = ""
        for path in finding.paths:
            match = next((risk for risk in relevant if risk.covers(path)), None)
            if match is None:
                unmatched.append(path)
            else:
                reason = match.reason
        if not unmatched:
            result.append(finding.model_copy(update={"accepted": True, "accepted_reason": reason}))
        elif len(unmatched) < len(finding.paths):
            result.append(with_paths(finding, tuple(unmatched)))
        else:
            result.append(finding)
    return tuple(result)

"""Plain words for an ``assess_proposal`` result: what each finding category means and what
to change. The result is explained as given; the proposal check is not re-run here
(its inputs, the current policy and the proposal, are not explain's inputs).
"""

from __future__ import annotations

from typing import Any

from prover.explain.models import ProposalExplanation, ProposalFinding

CATEGORY_MEANINGS: dict[str, tuple[str, str]] = {
    "link_local_reach": (
        "The proposal lets a binary reach a link-local address or a cloud metadata host "
        "(such as 169.254.169.254), where the cloud hands out instance credentials.",
        "Remove the endpoint that reaches the link-local or metadata address; a sandbox "
        "should never reach it.",
    ),
    "l7_bypass_credentialed": (
        "A binary whose protocol the L7 proxy cannot inspect (git, ssh, nc, raw TCP) can "
        "reach a host that has a sandbox credential in scope, so requests cannot be "
        "filtered by method or path.",
        "Drop that binary from the rule unless the task needs credentialed access through "
        "it; prefer an inspected REST endpoint with explicit methods and paths.",
    ),
    "credential_reach_expansion": (
        "A binary can now send data to a host and port that has a sandbox credential in "
        "scope, which it could not reach that way before.",
        "Confirm the binary is meant to authenticate to that host; otherwise narrow the "
        "rule to read-only methods (GET/HEAD/OPTIONS) on enforced REST, or remove it.",
    ),
    "capability_expansion": (
        "A binary that already had credentialed reach to a host and port gains HTTP methods "
        "it did not have (such as PUT, POST, PATCH or DELETE).",
        "Keep only the methods the task needs; drop write methods that are not part of it.",
    ),
}


def _path_text(category: str, path: dict[str, Any]) -> str:
    where = f"{path.get('host')}:{path.get('port')}"
    who = path.get("binary") or "a binary"
    rule = path.get("policy_name")
    text = f"{who} -> {where}"
    if category == "capability_expansion" and path.get("method"):
        text = f"{who} may {path['method']} {where}"
    if rule:
        text += f" (rule '{rule}')"
    return text


def explain_proposal(data: dict[str, Any]) -> ProposalExplanation:
    findings: list[ProposalFinding] = []
    for finding in data.get("findings") or []:
        if not isinstance(finding, dict):
            continue
        category = str(finding.get("category") or finding.get("query") or "unknown")
        meaning, change = CATEGORY_MEANINGS.get(
            category,
            (
                str(finding.get("description") or "An unrecognised finding category."),
                "; ".join(str(r) for r in finding.get("remediation") or []) or "Review it.",
            ),
        )
        paths = [_path_text(category, p) for p in finding.get("paths") or [] if isinstance(p, dict)]
        if finding.get("accepted"):
            change = (
                f"Accepted as a known risk ({finding.get('accepted_reason') or 'no reason'}). "
                + change
            )
        findings.append(
            ProposalFinding(category=category, meaning=meaning, paths=paths, what_to_change=change)
        )
    notes = _notes(data)
    if data.get("application_error"):
        summary = (
            f"The proposal could not be applied to the current policy: "
            f"{data['application_error']}; fix the proposed rule and assess it again."
        )
    elif findings:
        summary = (
            f"The proposal adds {len(findings)} kind(s) of risky access that a human should "
            "review before approving: " + ", ".join(f.category for f in findings) + "."
        )
    else:
        summary = "The proposal adds no new risky access by the proposal risk check."
    return ProposalExplanation(summary=summary, findings=findings, notes=notes)


def _notes(data: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    security = data.get("security_notes")
    if isinstance(security, list):
        notes.extend(f"Security note: {n}" for n in security if n)
    elif isinstance(security, str) and security:
        notes.append(f"Security note: {security}")
    for blocker in data.get("approval_blockers") or []:
        notes.append(
            f"Approval blocker: {blocker} (an always-blocked destination: remove it, the "
            "proposal can never be approved with it)."
        )
    notes.extend(f"Warning: {w}" for w in data.get("warnings") or [] if w)
    if data.get("auto_approvable") is False:
        notes.append("Not auto-approvable: a human must review it.")
    if data.get("adds_access") is False:
        notes.append("The proposal adds no access: the current policy already allows all of it.")
    elif data.get("adds_access") is True:
        notes.append("The proposal adds access the current policy does not allow.")
    boundary = data.get("boundary")
    if isinstance(boundary, dict) and boundary.get("result"):
        notes.append(
            f"Boundary check of the merged policy: {boundary['result']} (only within_boundary "
            "passes; the two checks answer different questions)."
        )
    return notes

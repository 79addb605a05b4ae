"""Plain-text report of a proposal assessment, laid out like the reference CLI (spec §10).

Header; the gateway's ``validation_result``; a finding summary (path counts per category
label, then accepted findings); one panel per unaccepted finding (title, description,
paths grouped by binary with sorted endpoints and methods, remediation); accepted
findings with their reasons; security notes, approval blockers and warnings; our
``adds_access`` and boundary verdicts; a final verdict line. No colour codes: callers
print the text as is.
"""

from __future__ import annotations

import json
from collections import defaultdict

from prover.proposal.assessment import ProposalAssessment
from prover.proposal.boundary import boundary_failed, boundary_lines
from prover.proposal.findings import LABELS, Finding
from prover.results.text import escape_control

EXIT_CLEAR = 0
EXIT_REVIEW = 1
EXIT_INVALID = 2


def exit_code(assessment: ProposalAssessment) -> int:
    """CLI exit status: 2 if the proposal cannot be applied, 1 if it needs review, else 0.

    A boundary result other than ``within_boundary`` needs review (see ``boundary.py``).
    (Invalid input never produces an assessment; the CLI maps those exceptions to 2.)
    """
    if assessment.application_error is not None:
        return EXIT_INVALID
    return EXIT_REVIEW if assessment.needs_review or boundary_failed(assessment) else EXIT_CLEAR


def _paths_block(finding: Finding) -> list[str]:
    by_binary: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in finding.paths:
        by_binary[path.binary].append((f"{path.host}:{path.port}", path.method))
    lines: list[str] = []
    for binary in sorted(by_binary):
        endpoints = sorted({endpoint for endpoint, _ in by_binary[binary]})
        methods = sorted({method for _, method in by_binary[binary] if method})
        lines.append(f"  Binary: {binary}")
        lines.append(f"    Endpoints: {', '.join(endpoints)}")
        if methods:
            lines.append(f"    Methods:   {', '.join(methods)}")
    return [*lines, ""]


def _bullets(title: str, entries: list[str]) -> list[str]:
    if not entries:
        return []
    return [title, *(f"  - {entry}" for entry in entries), ""]


def render_text(assessment: ProposalAssessment) -> str:
    """The human-readable report; ends with a newline."""
    a = assessment
    target = f" -> {a.target_rule}" if a.target_rule and a.target_rule != a.rule_name else ""
    lines = [
        "┌── OpenShell Policy Prover: proposal check ──┐",
        f"  Proposal:    {a.rule_name}{target} ({a.receipt.mode})",
        f"  Candidate:   {(a.receipt.merged_policy_sha256 or 'not built')[:16]}",
        f"  Decision:    {a.decision}",
        *([f"  Because:     {a.decision_reason}"] if a.decision_reason else []),
        "",
    ]
    if a.application_error is not None:
        lines += [f"Application error: {a.application_error}", ""]
        lines += _bullets("Security notes:", a.security_notes)
        lines += _bullets("Warnings:", a.warnings)
        lines.append("ERROR — the proposal cannot be applied to the current policy.")
        return _joined(lines)
    lines += ["Prover:", *(f"  {line}" for line in a.validation_result.split("\n")), ""]
    active = [f for f in a.findings if not f.accepted]
    accepted = [f for f in a.findings if f.accepted]
    if not a.findings:
        lines += ["No new tracked-risk findings (access is another question: see Adds access).", ""]
    else:
        lines.append("Finding Summary")
        for finding in active:
            lines.append(f"  {LABELS[finding.category]:>42}  {len(finding.paths)} path(s)")
        if accepted:
            lines.append(f"  {'ACCEPTED':>42}  {len(accepted)}")
        lines.append("")
        for number, finding in enumerate(active, start=1):
            lines += [
                f"--- Finding #{number} [{LABELS[finding.category]}] ---",
                f"  {finding.title}",
                f"  {finding.description}",
                "",
                *_paths_block(finding),
                "  Remediation:",
                *(f"    - {text}" for text in finding.remediation),
                "",
            ]
        if accepted:
            lines.append("--- Accepted Findings ---")
            for finding in accepted:
                lines += [
                    f"  {LABELS[finding.category]}  {finding.title}",
                    f"  Reason: {finding.accepted_reason}",
                    "",
                ]
    lines += _bullets("Security notes:", a.security_notes)
    lines += _bullets("Approval blockers (the draft can never be approved):", a.approval_blockers)
    lines += _bullets("Warnings:", a.warnings)
    lines += boundary_lines(a)
    lines += _fixed_lines(a)
    note = f" ({len(accepted)} accepted)" if accepted else ""
    if a.decision == "blocked":
        lines.append(f"BLOCKED — never approve: see the approval blockers.{note}")
    elif active:
        lines.append(f"REVIEW — prover findings require human attention.{note}")
    elif a.security_notes or a.approval_blockers:
        lines.append(f"REVIEW — security notes or approval blockers require human attention.{note}")
    elif boundary_failed(a):
        lines.append(f"REVIEW — the merged policy is not proven within the boundary.{note}")
    elif accepted:
        lines.append(f"PASS — All findings accepted.{note}")
    else:
        lines.append("PASS — nothing new needs review.")
    return _joined(lines)


def _fixed_lines(a: ProposalAssessment) -> list[str]:
    """The fixed proposal of a blocked assessment, in a few lines."""
    fixed = a.fixed_proposal
    if fixed is None:
        return []
    if fixed.found:
        lines = [
            f"Fixed proposal ({fixed.decision}; pass fixed_proposal.proposal as the proposal):"
        ]
        lines.append(f"  {json.dumps(fixed.proposal, ensure_ascii=False, separators=(',', ':'))}")
    else:
        lines = [f"Fixed proposal: none ({fixed.reason})"]
    lines += [f"  dropped: {entry}" for entry in fixed.dropped]
    return [*lines, ""]


def _joined(lines: list[str]) -> str:
    """One text line per entry: anything in an entry that could break or reorder a line
    (the rule name, hosts, binaries and reasons come from the proposal) is escaped."""
    return "".join(escape_control(line) + "\n" for line in lines)

"""The sentences of an explanation (summary and paragraph) and its text rendering."""

from __future__ import annotations

import json
from typing import Any

from prover.explain.models import (
    Blocker,
    Explanation,
    FixOp,
    GrantsKept,
    Verification,
    Violation,
)
from prover.results import COVERAGE_DOMAINS
from prover.results.report import escape_control

DOMAINS = ", ".join(COVERAGE_DOMAINS)


def within_texts(decided_by: str | None) -> tuple[str, str]:
    summary = (
        "The candidate is within the boundary: in every modeled domain it allows nothing "
        "the boundary does not."
    )
    how = f" (decided by: {decided_by})" if decided_by else ""
    paragraph = (
        f"The prover proved{how} that every action the candidate allows in the covered "
        f"domains ({DOMAINS}) is also allowed by the boundary: filesystem reads and writes, "
        "L4 connections and REST requests (with and without binary identity enforcement, "
        "for every destination address), the process identity and the Landlock setting. "
        "A policy that used anything outside these domains would have been reported "
        "unsupported, never within. It does not mean the candidate is minimal, that it is "
        "safe for the task, or that a running sandbox enforces it. Nothing needs fixing."
    )
    return summary, paragraph


def blocker_texts(result: str, blocker: Blocker) -> tuple[str, str]:
    if result == "error":
        summary = f"The input is invalid, so nothing was checked: {blocker.reason}."
    else:
        summary = (
            f"The prover could not decide ({result}, {blocker.reason_code}): {blocker.reason}."
        )
    parts = [blocker.meaning]
    if blocker.locations:
        parts.append("Look at: " + ", ".join(blocker.locations) + ".")
    parts.append("To let the prover decide: " + " ".join(blocker.rewrite_hints))
    if result != "error":
        parts.append("Treat this result as a failure: nothing was proved.")
    return summary, " ".join(parts)


def past_blocker_texts(
    result: str,
    blockers: list[Blocker],
    violations: list[Violation],
    rest: str,
    partial: str | None,
) -> tuple[str, str]:
    """Several blockers, each set aside, and the rest of the candidate explained."""
    count = len(blockers)
    if rest == "within_boundary" and partial is not None:
        after = f"after fixing {len(violations)} violation(s), see partial_candidate (not verified)"
        rest_text = f"the rest of the candidate is within the boundary {after}"
    elif rest == "within_boundary":
        rest_text = "the rest of the candidate is within the boundary"
    else:
        rest_text = f"the rest of the candidate is {rest} after {len(violations)} fix(es)"
    codes = ", ".join(dict.fromkeys(b.reason_code or "" for b in blockers))
    summary = (
        f"The prover could not decide ({result}, {codes}): {count} blocker(s) found, each "
        f"listed; {rest_text}."
    )
    parts = [
        f"Blocker {number}: {b.reason}. To let the prover decide: {' '.join(b.rewrite_hints)}"
        for number, b in enumerate(blockers, start=1)
    ]
    parts.append(
        "Each blocked rule was set aside to check the rest; nothing is proved about the "
        "blocked rules, so no fix is verified. Rewrite them as the hints say, apply the "
        "fixes of the rest (partial_candidate, when given: each edit was proved to only "
        "narrow), then explain again. Treat this result as a failure."
    )
    return summary, " ".join(parts)


def kept_words(kept: GrantsKept, original: str = "the original") -> str:
    """Grant units (entries granted, counted coarsely; a narrowing can split one entry
    into several) in words: the fixed candidate's and the original's, and deleting outright
    only where the fix keeps more (deleting is not itself a verified fix, and it ignores
    the edits made to get past blockers, so a larger count would mislead)."""
    text = f"the fixed candidate has {kept.with_fix}, {original} {kept.before}"
    if kept.with_rule_deleted is not None and kept.with_rule_deleted < kept.with_fix:
        text += f" (deleting the violating rules outright would keep only {kept.with_rule_deleted})"
    return text


def fix_kept_words(kept: GrantsKept) -> str:
    """One violation's fix in grant units, in words (as :func:`kept_words`): deleting
    outright is named only where it keeps fewer, never as if it kept more."""
    text = f"this fix keeps {kept.with_fix} of the {kept.before} before it"
    if kept.with_rule_deleted is not None and kept.with_rule_deleted < kept.with_fix:
        text += f" (deleting the rule outright would keep only {kept.with_rule_deleted})"
    return text


def _kept_text(kept: GrantsKept | None, reference: str) -> str:
    if kept is None or kept.before == 0:
        return ""
    repaired = reference.startswith("the repaired candidate")
    text = kept_words(kept, "the repaired candidate" if repaired else "the original")
    return f" {text[0].upper()}{text[1:]}."


def exceeds_texts(
    violations: list[Violation],
    blockers: list[Blocker],
    verified: bool,
    stopped_because: str | None,
    verification: Verification | None,
    kept: GrantsKept | None = None,
) -> tuple[str, str]:
    count = len(violations)
    more = " (more may remain)" if stopped_because and not verified else ""
    reference = "the original candidate" if verification is None else verification.compared_with
    if verified:
        tail = f"a fix, proved within the boundary and within {reference}, is offered."
    else:
        tail = "no verified fix is offered."
    summary = f"The candidate exceeds the boundary: {count} violation(s) found{more}; {tail}"
    parts: list[str] = []
    if violations:
        first = violations[0]
        parts.append(f"Violation 1: {first.description}")
        if first.granted_by:
            parts.append("Granted by: " + "; ".join(g.summary for g in first.granted_by) + ".")
        if first.closest_boundary_rules:
            closest = first.closest_boundary_rules[0]
            dims = ", ".join(m.dimension for m in closest.fails_on)
            details = "; ".join(m.detail for m in closest.fails_on)
            parts.append(
                f"The closest boundary entry is {closest.path} ({closest.summary}); it fails "
                f"on {dims}: {details}."
            )
        else:
            parts.append("The boundary grants nothing of this kind at all.")
        parts.append(f"Fix: {first.fix_description}.")
        if count > 1:
            parts.append(
                f"{count - 1} more violation(s) follow, each found by re-checking after the "
                "previous fix."
            )
    fixed = [b for b in blockers if b.fix]
    if fixed:
        parts.append(
            "Along the way, the fix also had to get past: "
            + "; ".join(f"{b.reason} ({b.fix_description})" for b in fixed)
            + "."
        )
    if verified:
        parts.append(
            "Apply the edits listed in fix, in order, or take fixed_candidate as a whole: "
            "the boundary check proved the fixed candidate within the boundary and within "
            f"{reference}, so the fix only narrows." + _kept_text(kept, reference)
        )
    else:
        reason = stopped_because or "the fixed candidate could not be proved"
        parts.append(f"No fix is offered because {reason}.")
        if verification is not None and verification.narrows_candidate.result != "within_boundary":
            parts.append(
                "The edits remove the violations but were not proved to only narrow the candidate."
            )
        stuck = [b for b in blockers if not b.fix]
        if stuck:
            parts.append("To continue: " + " ".join(stuck[-1].rewrite_hints))
        elif violations and violations[-1].fix:
            parts.append(
                "The edits listed per violation each remove that violation and only narrow "
                "the candidate; apply them, then explain again."
            )
    return summary, " ".join(parts)


# ---------------------------------------------------------------------------------------
# Text rendering


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _op_line(op: FixOp) -> str:
    if op.op == "remove":
        return f"remove {op.path} (was {_value(op.old)})"
    if op.op == "add":
        return f"add {op.path} = {_value(op.new)}"
    return f"replace {op.path}: {_value(op.old)} -> {_value(op.new)}"


def _violation_lines(number: int, violation: Violation) -> list[str]:
    lines = [
        f"violation {number}: {violation.counterexample_line}",
        f"  what: {violation.description}",
    ]
    lines.append("  granted by:")
    lines.extend(f"    - {g.path}: {g.summary}" for g in violation.granted_by)
    if violation.closest_boundary_rules:
        lines.append("  closest boundary rules:")
        for rule in violation.closest_boundary_rules:
            lines.append(f"    - {rule.path}: {rule.summary}")
            lines.extend(f"        fails on {m.dimension}: {m.detail}" for m in rule.fails_on)
    else:
        lines.append("  closest boundary rules: none (the boundary grants nothing of this kind)")
    lines.append(f"  fix ({violation.fix_kind}): {violation.fix_description}")
    lines.extend(f"    {_op_line(op)}" for op in violation.fix)
    if violation.grants_kept is not None:
        lines.append(f"  grant units: {fix_kept_words(violation.grants_kept)}")
    for rejected in violation.rejected_fixes:
        lines.append(f"  not offered: {rejected.description}: {rejected.reason}")
    return lines


def _blocker_lines(blocker: Blocker) -> list[str]:
    lines = [f"blocker: {blocker.reason_code}: {blocker.reason}", f"  meaning: {blocker.meaning}"]
    lines.extend(f"  hint: {hint}" for hint in blocker.rewrite_hints)
    lines.extend(f"  at: {where}" for where in blocker.locations)
    if blocker.fix:
        lines.append(f"  applied: {blocker.fix_description}")
        lines.extend(f"    {_op_line(op)}" for op in blocker.fix)
    return lines


def render_text(explanation: Explanation) -> str:
    """A readable multi-line rendering; control characters are escaped."""
    e = explanation
    lines = [f"result: {e.result.result}"]
    if e.result.reason_code:
        lines.append(f"reason: {e.result.reason_code}: {e.result.reason}")
    lines.append(f"summary: {e.summary}")
    if e.inputs.environment_sha256 is not None:
        lines.append(f"environment: sha256={e.inputs.environment_sha256}")
        lines.extend(f"assumption: {fact}" for fact in e.inputs.assumptions or ())
    if e.prior_result is not None:
        lines.append(f"given result ({e.prior_result.kind}): {e.prior_result.note}")
    lines += ["", e.explanation, ""]
    for number, violation in enumerate(e.violations, start=1):
        lines += [*_violation_lines(number, violation), ""]
    for blocker in e.blockers:
        lines += [*_blocker_lines(blocker), ""]
    if e.verification is not None:
        lines.append("verification:")
        for check in (e.verification.within_boundary, e.verification.narrows_candidate):
            extra = f" ({check.reason})" if check.reason else ""
            extra += f" [{check.counterexample_line}]" if check.counterexample_line else ""
            lines.append(f"  {check.question}: {check.result}{extra}")
            if check.note:
                lines.append(f"    note: {check.note}")
    if e.result.result == "within_boundary":
        lines.append("fix: none needed")
    else:
        lines.append(f"fix verified: {'yes' if e.fix_verified else 'no'}")
    if e.fix:
        lines.append(f"all edits, in order ({len(e.fix)}):")
        lines.extend(f"  {_op_line(op)}" for op in e.fix)
    if e.grants_kept is not None:
        lines.append(f"grant units: {kept_words(e.grants_kept)}")
    if e.enumeration.stopped_because:
        lines.append(f"stopped: {e.enumeration.stopped_because}")
    for number, need in enumerate(e.needs, start=1):
        closest = f" | closest {need.closest}" if need.closest else ""
        lines.append(f"need {number}: {need.status} | {need.need}{closest}")
    if e.fixed_candidate is not None:
        lines.append("fixed candidate:")
        lines.extend(f"  | {line}" for line in e.fixed_candidate.rstrip("\n").splitlines())
    if e.proposal is not None:
        lines += ["", f"proposal: {e.proposal.summary}"]
        for finding in e.proposal.findings:
            lines.append(f"  {finding.category}: {finding.meaning}")
            lines.extend(f"    - {p}" for p in finding.paths)
            lines.append(f"    change: {finding.what_to_change}")
        lines.extend(f"  {note}" for note in e.proposal.notes)
    return "".join(escape_control(line) + "\n" for line in lines)

"""The compact form of an explanation: what an agent needs to act, and nothing twice.

One line per violation (what, granted by, closest boundary entry, fix), the fixed
candidate with its verification, and the blockers. The full analysis
(:class:`~prover.explain.models.Explanation`) is attached only on request
(``detail="full"``). The text rendering is the human summary: it names the fixed
candidate but does not repeat it (it is in the structured result).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from prover.explain.models import (
    Blocker,
    Explanation,
    FixOp,
    GrantRef,
    GrantsKept,
    InputDigests,
    NeedStatus,
    Violation,
)
from prover.explain.text import kept_words
from prover.results.report import escape_control

Detail = Literal["compact", "full"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CompactViolation(_Model):
    what: str = Field(description="The violating action.")
    granted_by: list[str] = Field(description="Field paths in the original candidate.")
    closest: str | None = Field(description="Closest boundary entry and what it fails on.")
    fix: str = Field(description="The edits that remove it, or why none.")


class CompactBlocker(_Model):
    reason_code: str | None
    reason: str | None
    hint: str = Field(description="How to let the prover decide.")
    got_past: bool = Field(description="True: the fix includes edits that get past it.")


class CompactExplanation(_Model):
    """An explanation: compact unless detail=full, which adds `analysis`."""

    detail: Detail
    result: Literal["within_boundary", "exceeds_boundary", "unsupported", "inconclusive", "error"]
    reason_code: str | None
    reason: str | None
    summary: str
    prior: str | None = Field(description="Does the given `result` still hold?")
    violations: list[CompactViolation]
    blockers: list[CompactBlocker]
    fix_verified: bool = Field(description="fixed_candidate proved within both.")
    fixed_candidate: str | None = Field(description="The whole fixed policy, when verified.")
    partial_candidate: str | None = Field(description="Not verified: fixes so far.")
    verification: str | None
    grants_kept: GrantsKept | None
    stopped_because: str | None
    needs: list[NeedStatus] = Field(
        default_factory=list, description="What became of each need given, in order."
    )
    inputs: InputDigests
    analysis: dict[str, JsonValue] | None = Field(description="detail=full: the full analysis.")


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def op_line(op: FixOp) -> str:
    """One edit in a few words (the old value only where it is short)."""
    if op.op == "remove":
        return f"remove {op.path}"
    if op.op == "add":
        return f"add {op.path}={_value(op.new)}"
    return f"set {op.path}={_value(op.new)}"


def _grant(ref: GrantRef) -> str:
    if ref.binary_path is not None and ref.binary is not None:
        return f"{ref.path} (binary {ref.binary})"
    return ref.path


def _closest(violation: Violation) -> str | None:
    if not violation.closest_boundary_rules:
        return None
    rule = violation.closest_boundary_rules[0]
    dims = ",".join(m.dimension for m in rule.fails_on)
    return f"{rule.path} (fails on {dims})" if dims else rule.path


def _fix(violation: Violation) -> str:
    if not violation.fix:
        return violation.fix_description
    return "; ".join(op_line(op) for op in violation.fix)


def what_line(violation: Violation) -> str:
    """The action in a few words: who, what, where (no placeholder for an absent value)."""
    cex = violation.counterexample
    if cex.get("domain") != "network":
        return violation.counterexample_line
    binary = cex.get("binary")
    if cex.get("binary_identity_required") and isinstance(binary, str):
        who = binary
        ancestor = cex.get("ancestor_binary")
        if isinstance(ancestor, str) and ancestor != binary:
            who += f" (started by {ancestor})"
    else:
        who = "any process (binary identity not enforced)"
    if cex.get("protocol") == "rest":
        how = f"{cex.get('method')} {cex.get('path')}"
        query = cex.get("query_params")
        if isinstance(query, dict) and query:
            how += "?" + "&".join(f"{k}={v}" for k, vs in query.items() for v in vs or [])
    else:
        how = "L4 connect"
    where = f"{cex.get('host')}:{cex.get('port')} ip {cex.get('destination_ip')}"
    if cex.get("trusted_gateway"):
        where += " via trusted gateway"
    return f"{who}: {how} {where}"


def compact_violation(violation: Violation) -> CompactViolation:
    return CompactViolation(
        what=what_line(violation),
        granted_by=[_grant(g) for g in violation.granted_by],
        closest=_closest(violation),
        fix=_fix(violation),
    )


def _blocker(blocker: Blocker) -> CompactBlocker:
    hint = blocker.rewrite_hints[0] if blocker.rewrite_hints else blocker.meaning
    if blocker.reason:  # the reason is listed once, not again inside the hint
        hint = hint.replace(f" ({blocker.reason.split('invalid policy: ', 1)[-1]})", "")
    return CompactBlocker(
        reason_code=blocker.reason_code,
        reason=blocker.reason,
        hint=hint,
        got_past=bool(blocker.fix),
    )


def _verification(e: Explanation) -> str | None:
    v = e.verification
    if v is None:
        return None
    within = v.within_boundary.result
    narrows = v.narrows_candidate.result
    return f"fixed candidate within the boundary: {within}; within {v.compared_with}: {narrows}"


def compact(e: Explanation, detail: Detail = "compact") -> CompactExplanation:
    """The compact form of ``e``; ``detail="full"`` attaches the whole analysis."""
    return CompactExplanation(
        detail=detail,
        result=e.result.result,
        reason_code=e.result.reason_code,
        reason=e.result.reason,
        summary=e.summary,
        prior=e.prior_result.note if e.prior_result is not None else None,
        violations=[compact_violation(v) for v in e.violations],
        blockers=[_blocker(b) for b in e.blockers],
        fix_verified=e.fix_verified,
        fixed_candidate=e.fixed_candidate,
        partial_candidate=e.partial_candidate,
        verification=_verification(e),
        grants_kept=e.grants_kept,
        stopped_because=e.enumeration.stopped_because,
        needs=e.needs,
        inputs=e.inputs,
        analysis=e.model_dump(mode="json") if detail == "full" else None,
    )


def render_compact_text(c: CompactExplanation) -> str:
    """The human summary: one line per item; control characters escaped."""
    lines = [f"result: {c.result}" + (f" ({c.reason_code})" if c.reason_code else "")]
    lines.append(f"summary: {c.summary}")
    if c.prior:
        lines.append(f"given result: {c.prior}")
    for number, v in enumerate(c.violations, start=1):
        line = f"violation {number}: {v.what} | granted by {', '.join(v.granted_by) or '-'}"
        if v.closest:
            line += f" | closest {v.closest}"
        lines.append(f"{line} | fix: {v.fix}")
    for b in c.blockers:
        state = "got past" if b.got_past else "blocks"
        said = "" if b.reason and b.reason in c.summary else f": {b.reason}"
        lines.append(f"blocker ({state}): {b.reason_code}{said} | hint: {b.hint}")
    if c.verification:
        lines.append(f"verification: {c.verification}")
    if c.result != "within_boundary":
        lines.append(f"fix verified: {'yes' if c.fix_verified else 'no'}")
    if c.grants_kept is not None:
        lines.append(f"grant units: {kept_words(c.grants_kept)}")
    if c.stopped_because:
        lines.append(f"stopped: {c.stopped_because}")
    for number, need in enumerate(c.needs, start=1):
        closest = f" | closest {need.closest}" if need.closest else ""
        lines.append(f"need {number}: {need.status} | {need.need}{closest}")
    if c.inputs.environment_sha256 is not None:
        lines.append(f"environment: sha256={c.inputs.environment_sha256}")
        lines.extend(f"assumption: {fact}" for fact in c.inputs.assumptions or ())
    if c.fixed_candidate is not None:
        lines.append("fixed_candidate: in the structured result")
    elif c.partial_candidate is not None:
        lines.append("partial_candidate (not verified; blockers remain): in the structured result")
    return "".join(escape_control(line) + "\n" for line in lines)

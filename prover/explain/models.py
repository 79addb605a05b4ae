"""The structured result of ``explain``: what the CLI prints with ``-o json`` and what the
MCP tool ``explain_counterexample`` returns as structured content.

Field paths (``path``) are rendered like load errors: ``network_policies.gh.endpoints[0]
.host``, ``filesystem_policy.read_write[2]``, ``process.run_as_user``. A violation's
``granted_by`` paths and its own ``fix`` paths name entries of the original candidate (an
entry an earlier fix added keeps its path in the edited copy). The explanation's ``fix``
operations apply in the order listed, each to the document as the previous one left it
(the way JSON Patch applies), so list indices in a later operation already account for
earlier removals.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from prover.results import COVERAGE_DOMAINS

Dimension = Literal[
    "host",
    "port",
    "binary",
    "identity_mode",
    "layer",
    "method",
    "path",
    "query",
    "destination_ip",
    "deny_rule",
    "filesystem_access",
    "process_field",
    "landlock",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FixOp(_Model):
    """One edit of the candidate policy text."""

    op: Literal["replace", "remove", "add"] = Field(
        description="replace a value, remove a field or list item, or add one."
    )
    path: str = Field(
        description="Field path in the candidate, e.g. network_policies.gh.endpoints[0].host."
    )
    old: JsonValue = Field(default=None, description="The value before the edit (null for add).")
    new: JsonValue = Field(default=None, description="The value after the edit (null for remove).")


class GrantRef(_Model):
    """A candidate entry that grants the violating action."""

    path: str = Field(description="Field path of the granting entry.")
    summary: str = Field(description="The entry in plain words.")
    rule_key: str | None = Field(default=None, description="network_policies key (network only).")
    endpoint_index: int | None = None
    allow_rule_index: int | None = Field(
        default=None, description="Index in the endpoint's rules (REST rules only)."
    )
    binary: str | None = Field(
        default=None, description="The rule's binary that matched (binary identity enforced only)."
    )
    binary_path: str | None = Field(default=None, description="Field path of that binary entry.")
    value: JsonValue = Field(default=None, description="The value at path, as written.")


class Mismatch(_Model):
    """One dimension on which a boundary entry fails to cover the action."""

    dimension: Dimension
    boundary: str = Field(description="What the boundary entry allows on this dimension.")
    action: str = Field(description="What the violating action has on this dimension.")
    detail: str = Field(description="The mismatch in one sentence.")


class ClosestRule(_Model):
    """A boundary entry that comes close to allowing the action, and why it does not."""

    path: str = Field(description="Field path of the boundary entry.")
    summary: str
    rule_key: str | None = None
    endpoint_index: int | None = None
    fails_on: list[Mismatch] = Field(description="Every dimension that is not covered.")


class GrantsKept(_Model):
    """How much of the candidate a fix keeps, in grant units (see ``prover.explain.measure``)."""

    before: int = Field(description="Grant units of the candidate before this fix.")
    with_fix: int = Field(description="Grant units after this fix.")
    with_rule_deleted: int | None = Field(
        description="Grant units after deleting the granting rules or entries outright "
        "instead, for comparison only: not a verified fix, and blind to edits made to get "
        "past blockers; null when deleting is not a fix (process and Landlock settings)."
    )


class RejectedFix(_Model):
    """A narrower fix that was considered and not offered, with the reason."""

    description: str
    reason: str


class Violation(_Model):
    """One distinct action the candidate allows and the boundary refuses."""

    counterexample: dict[str, JsonValue] = Field(
        description="The counterexample object, as check_boundary reports it."
    )
    counterexample_line: str
    description: str = Field(description="The action in plain words.")
    granted_by: list[GrantRef]
    closest_boundary_rules: list[ClosestRule] = Field(
        description="Boundary entries closest to allowing the action, closest first; empty "
        "when the boundary grants nothing of this kind."
    )
    fix: list[FixOp] = Field(
        description="Edits that remove this violation, paths in the original candidate "
        "(empty: none found)."
    )
    fix_kind: Literal["narrow", "remove", "align", "none"]
    fix_description: str
    grants_kept: GrantsKept | None = None
    rejected_fixes: list[RejectedFix] = Field(default_factory=list)


class Blocker(_Model):
    """An ``unsupported``/``inconclusive``/``error`` result: what it means and how to
    rewrite the policies so that the prover can decide."""

    reason_code: str | None
    reason: str | None
    meaning: str
    rewrite_hints: list[str]
    locations: list[str] = Field(
        default_factory=list, description="Field paths the reason points at, when found."
    )
    fix: list[FixOp] = Field(
        default_factory=list,
        description="Edits applied to get past this blocker while fixing violations "
        "(empty when the explanation stops here).",
    )
    fix_description: str | None = None


class CheckSummary(_Model):
    """One boundary-check result, as used for verification."""

    question: str = Field(description="What was checked, e.g. 'fixed candidate ⊆ boundary'.")
    result: str
    reason_code: str | None = None
    reason: str | None = None
    counterexample_line: str | None = None
    note: str | None = None


class Verification(_Model):
    within_boundary: CheckSummary = Field(description="fixed candidate ⊆ boundary.")
    narrows_candidate: CheckSummary = Field(
        description="fixed candidate ⊆ original candidate (or its repair, or not_run, when "
        "the runtime refuses the original)."
    )
    compared_with: str = Field(
        default="the original candidate",
        description="What narrows_candidate compared with: the original candidate, or the "
        "original with the adjustments the prover cannot order (see its note).",
    )


class ExplainedResult(_Model):
    """The verdict being explained (always a fresh check of the given policies)."""

    result: Literal["within_boundary", "exceeds_boundary", "unsupported", "inconclusive", "error"]
    exit_code: int
    reason_code: str | None = None
    reason: str | None = None
    counterexample: dict[str, JsonValue] | None = None
    counterexample_line: str | None = None


class PriorResult(_Model):
    """The result the caller passed in, and whether a fresh check agrees with it."""

    kind: Literal["boundary_check", "counterexample", "proposal", "unrecognised"]
    result: str | None = None
    agrees: bool | None = Field(
        default=None,
        description="Whether the fresh check gives the same result; null if not comparable.",
    )
    note: str


class ProposalFinding(_Model):
    category: str
    meaning: str
    paths: list[str] = Field(description="Each risky path in plain words.")
    what_to_change: str


class ProposalExplanation(_Model):
    """Plain words for an ``assess_proposal`` result (explained as given, not re-run)."""

    summary: str
    findings: list[ProposalFinding]
    notes: list[str] = Field(default_factory=list)


NeedState = Literal["kept", "dropped", "exceeds_boundary", "not_granted", "open"]


class NeedStatus(_Model):
    """What became of one need."""

    need: str = Field(description="The request, in one line.")
    status: NeedState = Field(
        description="kept: the fixed candidate (or the candidate, when within) allows it; "
        "exceeds_boundary: the boundary refuses it, so no fix can keep it; not_granted: the "
        "candidate does not allow it (a fix only narrows); open: no verified fix was found; "
        "dropped: the fix does not keep it."
    )
    closest: str | None = Field(
        default=None,
        description="exceeds_boundary: the boundary entry that comes closest, and what it "
        "fails on.",
    )


class Enumeration(_Model):
    complete: bool = Field(
        description="True when every violation was found and fixed (the fixed candidate was "
        "proved within the boundary) or there was none."
    )
    stopped_because: str | None = None
    checks_run: int


class InputDigests(_Model):
    """SHA-256 of each policy text as given (UTF-8); null for a file that was not read."""

    candidate_sha256: str | None
    boundary_sha256: str | None
    environment_sha256: str | None = Field(
        default=None,
        description="SHA-256 of the environment evidence document, when one was given.",
        exclude_if=lambda value: value is None,
    )
    assumptions: tuple[str, ...] | None = Field(
        default=None,
        description="With environment evidence: the facts about the sandbox image the "
        "explained verdict relies on.",
        exclude_if=lambda value: value is None,
    )


class Explanation(_Model):
    """A plain explanation of a boundary-check result, with a verified fix when one exists."""

    summary: str = Field(description="One sentence.")
    explanation: str = Field(description="A short paragraph written for an agent.")
    result: ExplainedResult
    coverage: list[str] = Field(default_factory=lambda: list(COVERAGE_DOMAINS))
    prior_result: PriorResult | None = None
    violations: list[Violation] = Field(default_factory=list)
    blockers: list[Blocker] = Field(default_factory=list)
    grants_kept: GrantsKept | None = Field(
        default=None,
        description="Over the whole candidate: grant units before, with the verified fix, and "
        "after deleting every violating rule or entry outright instead.",
    )
    fix: list[FixOp] = Field(
        default_factory=list,
        description="Every edit of the verified fix, in the order to apply them (the "
        "violations' and blockers' edits, interleaved as they were found); empty when no "
        "verified fix is offered.",
    )
    fixed_candidate: str | None = Field(
        default=None, description="The whole fixed candidate (YAML), only when fix_verified."
    )
    fix_verified: bool = Field(
        default=False,
        description="True only when the fixed candidate was proved within the boundary and "
        "within the original candidate (one the runtime refuses: within its repair, the "
        "first blocker's fix).",
    )
    partial_candidate: str | None = Field(
        default=None,
        description="When no verified fix is offered but some violations were fixed before a "
        "blocker stopped the rounds: the candidate with those fixes (each proved to only "
        "narrow), for the caller to continue from. Not proved within the boundary.",
    )
    verification: Verification | None = None
    enumeration: Enumeration
    proposal: ProposalExplanation | None = None
    needs: list[NeedStatus] = Field(
        default_factory=list,
        description="What became of each need given (the requests a fix must keep), in order.",
    )
    inputs: InputDigests

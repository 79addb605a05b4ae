"""The result of a proposal assessment, as returned to every face (library, CLI, MCP)."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prover.proposal.findings import Finding
from prover.proposal.fixed import FixedProposal

Mode = Literal["agent_authored", "mechanistic"]
ENGINE = "finite-set evaluation of the reference reachability predicate (no solver needed)"


def sha256_of(data: str | bytes | None) -> str | None:
    if data is None:
        return None
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()


class ProposalReceipt(BaseModel):
    """Binds the assessment to its exact inputs (hex SHA-256 of each as given)."""

    model_config = ConfigDict(frozen=True)

    current_sha256: str
    proposal_sha256: str
    credentials_sha256: str | None = None
    accepted_risks_sha256: str | None = None
    registry_sha256: str | None = None
    merged_policy_sha256: str | None = None
    environment_sha256: str | None = Field(
        default=None,
        description="SHA-256 of the environment evidence both checks used, when one was given.",
        exclude_if=lambda value: value is None,
    )
    assumptions: tuple[str, ...] | None = Field(
        default=None,
        description="With environment evidence: the facts about the sandbox image that "
        "adds_access relies on (the boundary verdict lists its own).",
        exclude_if=lambda value: value is None,
    )
    mode: Mode
    engine: str = ENGINE


class ProposalAssessment(BaseModel):
    """What a proposed network rule adds, relative to the current policy."""

    findings: list[Finding] = Field(
        description="New findings (delta after suppression), category order; accepted "
        "risks mark or trim them."
    )
    validation_result: str = Field(
        description="The gateway's verdict string; '' when the proposal could not be applied."
    )
    security_notes: list[str] = Field(description="Heuristic notes on the proposed rule.")
    auto_approvable: bool = Field(
        description="The gateway would auto-approve: empty delta, no notes, no blocker, no "
        "application error, and the boundary (if given) passed."
    )
    application_error: str | None = Field(
        description="Why the proposal cannot be applied (merge/validation); the model did not run."
    )
    no_new_findings: bool = Field(
        description="No new tracked-risk findings (the gateway's 'empty delta'); says "
        "nothing about access: see adds_access."
    )
    needs_review: bool = Field(
        description="A human must look: unaccepted findings, notes, blockers, an "
        "application error, or a boundary result other than within_boundary."
    )
    approval_blockers: list[str] = Field(
        default_factory=list,
        description="Why the draft can never be approved: always-blocked destinations, or "
        "the merged policy proved to exceed the given boundary.",
    )
    warnings: list[str] = Field(default_factory=list)
    rule_name: str = Field(description="The rule name the proposal requested.")
    target_rule: str | None = Field(
        default=None, description="The policy key that received the rule (after folding)."
    )
    proposed_rule: dict[str, Any] = Field(
        description="The rule as evaluated (after mechanistic canonicalisation)."
    )
    merged_policy: str | None = Field(
        default=None, description="The candidate policy as authored YAML (None on error)."
    )
    adds_access: bool | None = Field(
        default=None,
        description="false: the merged policy is proven within the current policy (the "
        "proposal adds no access); true: it allows something the current policy does not; "
        "null: undecided (see warnings) or the proposal could not be applied.",
    )
    boundary: dict[str, Any] | None = Field(
        default=None,
        description="The boundary check of the merged policy against the given boundary "
        "policy (the check command's JSON object); null when no boundary was given or the "
        "proposal could not be applied. Only result within_boundary passes.",
    )
    decision: Literal["invalid", "blocked", "needs_review", "accepted", "auto_approvable"] = Field(
        default="needs_review",
        description="The one value to act on: auto_approvable; accepted (only accepted "
        "risks); needs_review; blocked (never approve); invalid (cannot be applied).",
    )
    decision_reason: str = Field(
        default="", description="Why `decision` is what it is, in one sentence."
    )
    fixed_proposal: FixedProposal | None = Field(
        default=None,
        description="When blocked: the narrowest proposal proved acceptable (found, "
        "proposal, its decision, what was dropped and why), or why there is none.",
    )
    receipt: ProposalReceipt

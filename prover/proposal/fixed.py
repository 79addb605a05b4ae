"""The fixed proposal of a blocked assessment (computed in :mod:`prover.proposal.repair`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class FixedProposal(BaseModel):
    """The narrowest proposal the prover could prove acceptable, or why there is none."""

    model_config = ConfigDict(extra="forbid")

    found: bool = Field(description="True: `proposal` passes; pass it as the proposal.")
    proposal: dict[str, Any] | None = Field(
        default=None, description="{rule_name, rule}: the narrowed proposal (when found)."
    )
    decision: (
        Literal["invalid", "blocked", "needs_review", "accepted", "auto_approvable"] | None
    ) = Field(default=None, description="The narrowed proposal's own decision.")
    dropped: list[str] = Field(
        default_factory=list, description="What was dropped or narrowed, each with why."
    )
    reason: str | None = Field(default=None, description="Why no proposal was found.")

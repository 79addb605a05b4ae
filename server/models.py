"""Pydantic models of the MCP tools' structured output; they generate ``outputSchema``.

``BoundaryCheckResult`` is the object ``policy-prover check --output json`` prints, key
for key and in the same order, followed by the receipt. The counterexample and receipt
models are the core's own (``prover.results``), so the schema cannot drift from what the
core produces.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from prover.results import Counterexample, ReasonCode, Receipt

ResultValue = Literal["within_boundary", "exceeds_boundary", "unsupported", "inconclusive", "error"]


class Coverage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domains: list[str] = Field(description="The policy parts modeled; others were not checked.")


class BoundaryInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    candidate: str = Field(description="Where the candidate policy came from.")
    boundary: str = Field(description="Where the boundary policy came from.")


class BoundaryCheckResult(BaseModel):
    """The result of one boundary check."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field()
    prover_version: str = Field()
    check: Literal["boundary"] = Field()
    coverage: Coverage | None
    result: ResultValue = Field(description="Only within_boundary passes.")
    exit_code: int = Field(description="0 within, 1 exceeds, 2 error, 3 other, 130 cancelled.")
    inputs: BoundaryInputs = Field()
    counterexample: Counterexample | None
    reason_code: ReasonCode | None
    reason: str | None = Field()
    receipt: Receipt

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

    domains: list[str] = Field(
        description="The parts of a policy the prover models. A policy part not listed "
        "here was not checked."
    )


class BoundaryInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    candidate: str = Field(description="Where the candidate policy came from.")
    boundary: str = Field(description="Where the boundary policy came from.")


class BoundaryCheckResult(BaseModel):
    """The result of one boundary check."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(description="Version of this result format (1).")
    prover_version: str = Field(description="Version of policy-prover that decided.")
    check: Literal["boundary"] = Field(description="Which check ran.")
    coverage: Coverage | None = Field(
        description="The modeled policy parts; null on an error result."
    )
    result: ResultValue = Field(
        description="within_boundary is the only passing result; every other value is a "
        "failure to act on (see reason_code)."
    )
    exit_code: int = Field(
        description="The CLI exit status for this result: 0 within, 1 exceeds, 2 error, "
        "3 unsupported or inconclusive, 130 cancelled."
    )
    inputs: BoundaryInputs = Field(description="Names of the two policies that were compared.")
    counterexample: Counterexample | None = Field(
        description="On exceeds_boundary: one concrete action the candidate allows and the "
        "boundary refuses. Null otherwise."
    )
    reason_code: ReasonCode | None = Field(
        description="Stable machine code for unsupported, inconclusive and error results."
    )
    reason: str | None = Field(description="Human-readable explanation of reason_code.")
    receipt: Receipt = Field(
        description="Binds this verdict to the exact inputs: SHA-256 of each policy text "
        "(UTF-8), the Z3 version, time spent and the stage that decided."
    )

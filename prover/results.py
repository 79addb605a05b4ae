"""Result types of the boundary check: a closed verdict, stable reason codes, typed
counterexamples and the receipt that binds a verdict to its inputs.

Only ``Verdict.WITHIN`` authorises anything. Field order of every model follows the
reference CLI's JSON contract (spec §11-§12), because ``model_dump`` keeps it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from prover.budget import CANCELLED_REASON, TIMEOUT_REASON

COVERAGE_DOMAINS: tuple[str, ...] = (
    "filesystem",
    "network_l4",
    "network_rest",
    "process",
    "landlock",
)


class Verdict(StrEnum):
    WITHIN = "within_boundary"
    EXCEEDS = "exceeds_boundary"
    UNSUPPORTED = "unsupported"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


class ReasonCode(StrEnum):
    UNSUPPORTED_POLICY_SHAPE = "unsupported_policy_shape"
    UNRESOLVED_WORKDIR = "unresolved_workdir"
    UNRESOLVED_FILESYSTEM_PATH = "unresolved_filesystem_path"
    UNRESOLVED_BINARY_PATH = "unresolved_binary_path"
    RESOURCE_LIMIT = "resource_limit"
    SOLVER_TIMEOUT = "solver_timeout"
    SOLVER_UNKNOWN = "solver_unknown"
    INVALID_WITNESS = "invalid_witness"
    CANCELLED = "cancelled"
    INVALID_INPUT = "invalid_input"


EXIT_CODES: dict[Verdict, int] = {
    Verdict.WITHIN: 0,
    Verdict.EXCEEDS: 1,
    Verdict.ERROR: 2,
    Verdict.UNSUPPORTED: 3,
    Verdict.INCONCLUSIVE: 3,
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProcessCounterexample(_Frozen):
    domain: Literal["process"] = "process"
    field: Literal["run_as_user", "run_as_group"]
    boundary: str
    candidate: str


class LandlockCounterexample(_Frozen):
    domain: Literal["landlock"] = "landlock"
    boundary: str
    candidate: str


class FilesystemCounterexample(_Frozen):
    domain: Literal["filesystem"] = "filesystem"
    access: Literal["read", "write"]
    path: str


class NetworkCounterexample(_Frozen):
    domain: Literal["network"] = "network"
    binary: str | None
    ancestor_binary: str | None
    binary_identity_required: bool
    host: str
    destination_ip: str
    trusted_gateway: bool
    port: int
    protocol: Literal["l4", "rest"]
    method: str | None
    path: str | None
    query_params: dict[str, list[str]] | None = Field(
        default=None, description="Decoded query values per key; omitted when empty."
    )


Counterexample = Annotated[
    ProcessCounterexample
    | LandlockCounterexample
    | FilesystemCounterexample
    | NetworkCounterexample,
    Field(discriminator="domain"),
]


class CheckOutcome(_Frozen):
    """What the boundary check decided, before any face renders it."""

    verdict: Verdict
    counterexample: Counterexample | None = None
    reason_code: ReasonCode | None = None
    reason: str | None = None
    decided_by: str | None = Field(
        default=None,
        description="Which stage decided: equality, structural, probe, z3, process, ...",
    )
    readings: tuple[str, ...] = Field(
        default=(),
        description="Constructs read beyond the reference model (extended semantics).",
    )

    @property
    def exit_code(self) -> int:
        if self.reason_code is ReasonCode.CANCELLED:
            return 130
        return EXIT_CODES[self.verdict]

    @classmethod
    def within(cls, decided_by: str | None = None) -> CheckOutcome:
        return cls(verdict=Verdict.WITHIN, decided_by=decided_by)

    @classmethod
    def exceeds(cls, counterexample: object, decided_by: str | None = None) -> CheckOutcome:
        return cls(verdict=Verdict.EXCEEDS, counterexample=counterexample, decided_by=decided_by)

    @classmethod
    def unsupported(cls, code: ReasonCode, reason: str) -> CheckOutcome:
        return cls(verdict=Verdict.UNSUPPORTED, reason_code=code, reason=reason)

    @classmethod
    def inconclusive(cls, code: ReasonCode, reason: str) -> CheckOutcome:
        return cls(verdict=Verdict.INCONCLUSIVE, reason_code=code, reason=reason)

    @classmethod
    def stopped(cls, cancelled: bool) -> CheckOutcome:
        """A check stopped by cancellation or by its deadline, in the reference's words."""
        if cancelled:
            return cls.inconclusive(ReasonCode.CANCELLED, CANCELLED_REASON)
        return cls.inconclusive(ReasonCode.SOLVER_TIMEOUT, TIMEOUT_REASON)

    @classmethod
    def error(cls, reason: str) -> CheckOutcome:
        return cls(verdict=Verdict.ERROR, reason_code=ReasonCode.INVALID_INPUT, reason=reason)


class Receipt(_Frozen):
    """Binds a verdict to the exact inputs and engine that produced it."""

    candidate_sha256: str | None
    boundary_sha256: str | None
    z3_version: str
    elapsed_ms: float
    decided_by: str | None = None
    semantics: Literal["extended", "reference"] = Field(
        default="extended",
        description="extended: the sound analysis beyond the reference model (default); "
        "reference: exactly the reference prover's verdicts.",
    )
    readings: tuple[str, ...] = Field(
        default=(), description="Constructs read beyond the reference model."
    )
    environment_sha256: str | None = Field(
        default=None,
        description="SHA-256 of the environment evidence document the check used; absent "
        "without one.",
    )
    assumptions: tuple[str, ...] | None = Field(
        default=None,
        description="With environment evidence: the facts about the sandbox image the "
        "verdict relies on (empty when it relied on none).",
    )

    def dump(self) -> dict[str, object]:
        """The JSON form; the environment fields only when evidence was given."""
        data: dict[str, object] = self.model_dump(mode="json")
        if self.environment_sha256 is None:
            data.pop("environment_sha256", None)
            data.pop("assumptions", None)
        return data

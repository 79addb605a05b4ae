"""Result types of the boundary check: a closed verdict, stable reason codes, typed
counterexamples and the receipt that binds a verdict to its inputs.

Only ``Verdict.WITHIN`` authorises anything. Field order of every record follows the
reference CLI's JSON contract (spec §11-§12), because ``model_dump`` keeps it.

The records are frozen dataclasses, not pydantic models, so that a check (and the
command line's cold start) never imports pydantic. They keep the part of the pydantic
surface the rest of the code uses (``model_dump``, ``model_copy``, ``model_validate``)
and validate and serialise inside pydantic models and ``TypeAdapter`` through
:mod:`prover.results_schema`, which holds their pydantic definitions (the JSON Schema of
the MCP tools' output). ``Counterexample``, the discriminated union of the four
counterexample records, is built on first use for the same reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any, Literal, Self

from prover.budget import CANCELLED_REASON, TIMEOUT_REASON

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

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


def _dump(value: object, mode: str) -> object:
    if isinstance(value, _Record):
        return value.model_dump(mode=mode)
    if isinstance(value, Enum):
        return value.value if mode == "json" else value
    if isinstance(value, tuple | list):
        items = [_dump(item, mode) for item in value]
        return items if mode == "json" or isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {key: _dump(item, mode) for key, item in value.items()}
    return value


class _Record:
    """The pydantic surface of the frozen records (pydantic is imported only when a
    model, ``TypeAdapter`` or ``model_validate`` asks for it)."""

    __slots__ = ()

    def model_dump(self, *, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        """The fields in declaration order, nested records as dicts (``mode="json"``:
        enums as their values, tuples as lists), as pydantic's ``model_dump``."""
        return {f.name: _dump(getattr(self, f.name), mode) for f in fields(self)}  # type: ignore[arg-type]

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update`` applied, unvalidated (as pydantic's ``model_copy``)."""
        return replace(self, **(update or {}))  # type: ignore[type-var]

    @classmethod
    def model_validate(cls, data: object) -> Self:
        """Validate ``data`` (a mapping or a record) with the pydantic definition."""
        from pydantic import TypeAdapter

        result: Self = TypeAdapter(cls).validate_python(data)
        return result

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[Any], handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from prover.results_schema import record_core_schema

        return record_core_schema(cls, handler)


@dataclass(frozen=True, kw_only=True, slots=True)
class ProcessCounterexample(_Record):
    domain: Literal["process"] = "process"
    field: Literal["run_as_user", "run_as_group"]
    boundary: str
    candidate: str


@dataclass(frozen=True, kw_only=True, slots=True)
class LandlockCounterexample(_Record):
    domain: Literal["landlock"] = "landlock"
    boundary: str
    candidate: str


@dataclass(frozen=True, kw_only=True, slots=True)
class FilesystemCounterexample(_Record):
    domain: Literal["filesystem"] = "filesystem"
    access: Literal["read", "write"]
    path: str


@dataclass(frozen=True, kw_only=True, slots=True)
class NetworkCounterexample(_Record):
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
    #: Decoded query values per key; omitted when empty.
    query_params: dict[str, list[str]] | None = None


AnyCounterexample = (
    ProcessCounterexample
    | LandlockCounterexample
    | FilesystemCounterexample
    | NetworkCounterexample
)

if TYPE_CHECKING:
    Counterexample = AnyCounterexample


def __getattr__(name: str) -> object:
    # ``Counterexample`` (the union discriminated by ``domain``, for pydantic) needs
    # pydantic, which a check must not import: built when first asked for.
    if name == "Counterexample":
        from prover.results_schema import counterexample_union

        union = counterexample_union()
        globals()[name] = union
        return union
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckOutcome(_Record):
    """What the boundary check decided, before any face renders it."""

    verdict: Verdict
    counterexample: AnyCounterexample | None = None
    reason_code: ReasonCode | None = None
    reason: str | None = None
    #: Which stage decided: equality, structural, probe, z3, process, ...
    decided_by: str | None = None
    #: Constructs read beyond the reference model (extended semantics).
    readings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.readings, tuple):
            object.__setattr__(self, "readings", tuple(self.readings))

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
        if not isinstance(counterexample, _COUNTEREXAMPLES):
            raise TypeError(f"not a counterexample: {type(counterexample).__name__}")
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


_COUNTEREXAMPLES = (
    ProcessCounterexample,
    LandlockCounterexample,
    FilesystemCounterexample,
    NetworkCounterexample,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Receipt(_Record):
    """Binds a verdict to the exact inputs and engine that produced it (field
    descriptions: :class:`prover.results_schema.Receipt`)."""

    candidate_sha256: str | None
    boundary_sha256: str | None
    z3_version: str
    elapsed_ms: float
    decided_by: str | None = None
    semantics: Literal["extended", "reference"] = "extended"
    readings: tuple[str, ...] = ()
    environment_sha256: str | None = None
    assumptions: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.readings, tuple):
            object.__setattr__(self, "readings", tuple(self.readings))
        if self.assumptions is not None and not isinstance(self.assumptions, tuple):
            object.__setattr__(self, "assumptions", tuple(self.assumptions))

    def dump(self) -> dict[str, object]:
        """The JSON form; the environment fields only when evidence was given."""
        data: dict[str, object] = self.model_dump(mode="json")
        if self.environment_sha256 is None:
            data.pop("environment_sha256", None)
            data.pop("assumptions", None)
        return data

"""Result types of the boundary check: a closed verdict, stable reason codes, typed
counterexamples and the receipt that binds a verdict to its inputs.

Only ``Verdict.WITHIN`` authorises anything. Field order of every record follows the
reference CLI's JSON contract (spec §11-§12), because ``model_dump`` keeps it.

The records are small frozen classes, not pydantic models, so that a check (and the
command line's cold start) never imports pydantic. They keep the part of the pydantic
surface the rest of the code uses (``model_dump``, ``model_copy``, ``model_validate``)
and validate and serialise inside pydantic models and ``TypeAdapter`` through
:mod:`prover.results.schema`, which holds their pydantic definitions (the JSON Schema of
the MCP tools' output). ``Counterexample``, the discriminated union of the four
counterexample records, is built on first use for the same reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from prover.run.budget import CANCELLED_REASON, TIMEOUT_REASON

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


_REQUIRED: Any = object()  # a field without a default


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


def _rebuild(cls: type[_Record], values: dict[str, Any]) -> _Record:
    return cls(**values)


class _Record:
    """A frozen record: keyword construction (a missing or unknown field is a
    ``TypeError``), ``==``, ``hash`` and ``repr`` by field values, and the pydantic
    surface the code uses (pydantic is imported only when a model, ``TypeAdapter`` or
    ``model_validate`` asks for it). Plain classes, not dataclasses: a CLI cold start
    pays for each dataclass made at import."""

    __slots__ = ()
    #: ``(name, default)`` of every field in order; ``_REQUIRED`` marks no default.
    _FIELDS: ClassVar[tuple[tuple[str, Any], ...]] = ()

    def __init__(self, **values: Any) -> None:
        for name, default in self._FIELDS:
            value = values.pop(name, default)
            if value is _REQUIRED:
                raise TypeError(f"{type(self).__name__} needs the field {name!r}")
            object.__setattr__(self, name, value)
        if values:
            raise TypeError(f"{type(self).__name__} has no field {sorted(values)[0]!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name, _ in self._FIELDS)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in self._FIELDS)
        return f"{type(self).__name__}({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), {name: getattr(self, name) for name, _ in self._FIELDS})

    def model_dump(self, *, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        """The fields in declaration order, nested records as dicts (``mode="json"``:
        enums as their values, tuples as lists), as pydantic's ``model_dump``."""
        return {name: _dump(getattr(self, name), mode) for name, _ in self._FIELDS}

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update`` applied, unvalidated (as pydantic's ``model_copy``)."""
        values = {name: getattr(self, name) for name, _ in self._FIELDS}
        values.update(update or {})
        return type(self)(**values)

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
        from prover.results.schema import record_core_schema

        return record_core_schema(cls, handler)


class ProcessCounterexample(_Record):
    _FIELDS = (
        ("domain", "process"),
        ("field", _REQUIRED),
        ("boundary", _REQUIRED),
        ("candidate", _REQUIRED),
    )
    __slots__ = tuple(name for name, _ in _FIELDS)
    domain: Literal["process"]
    field: Literal["run_as_user", "run_as_group"]
    boundary: str
    candidate: str


class LandlockCounterexample(_Record):
    _FIELDS = (("domain", "landlock"), ("boundary", _REQUIRED), ("candidate", _REQUIRED))
    __slots__ = tuple(name for name, _ in _FIELDS)
    domain: Literal["landlock"]
    boundary: str
    candidate: str


class FilesystemCounterexample(_Record):
    _FIELDS = (("domain", "filesystem"), ("access", _REQUIRED), ("path", _REQUIRED))
    __slots__ = tuple(name for name, _ in _FIELDS)
    domain: Literal["filesystem"]
    access: Literal["read", "write"]
    path: str


class NetworkCounterexample(_Record):
    _FIELDS = (
        ("domain", "network"),
        *(
            (name, _REQUIRED)
            for name in (
                "binary",
                "ancestor_binary",
                "binary_identity_required",
                "host",
                "destination_ip",
                "trusted_gateway",
                "port",
                "protocol",
                "method",
                "path",
            )
        ),
        ("query_params", None),
    )
    __slots__ = tuple(name for name, _ in _FIELDS)
    domain: Literal["network"]
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
    query_params: dict[str, list[str]] | None


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
        from prover.results.schema import counterexample_union

        union = counterexample_union()
        globals()[name] = union
        return union
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class CheckOutcome(_Record):
    """What the boundary check decided, before any face renders it."""

    _FIELDS = (
        ("verdict", _REQUIRED),
        ("counterexample", None),
        ("reason_code", None),
        ("reason", None),
        ("decided_by", None),
        ("readings", ()),
    )
    __slots__ = tuple(name for name, _ in _FIELDS)
    verdict: Verdict
    counterexample: AnyCounterexample | None
    reason_code: ReasonCode | None
    reason: str | None
    #: Which stage decided: equality, structural, probe, z3, process, ...
    decided_by: str | None
    #: Constructs read beyond the reference model (extended semantics).
    readings: tuple[str, ...]

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
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


class Receipt(_Record):
    """Binds a verdict to the exact inputs and engine that produced it (field
    descriptions: :class:`prover.results.schema.Receipt`)."""

    _FIELDS = (
        ("candidate_sha256", _REQUIRED),
        ("boundary_sha256", _REQUIRED),
        ("z3_version", _REQUIRED),
        ("elapsed_ms", _REQUIRED),
        ("decided_by", None),
        ("semantics", "extended"),
        ("readings", ()),
        ("environment_sha256", None),
        ("assumptions", None),
    )
    __slots__ = tuple(name for name, _ in _FIELDS)
    candidate_sha256: str | None
    boundary_sha256: str | None
    z3_version: str
    elapsed_ms: float
    decided_by: str | None
    semantics: Literal["extended", "reference"]
    readings: tuple[str, ...]
    environment_sha256: str | None
    assumptions: tuple[str, ...] | None

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
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

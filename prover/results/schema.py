"""The pydantic definitions of the result records of :mod:`prover.results`.

The records themselves are plain frozen dataclasses so that a check never imports
pydantic; where pydantic meets them (the MCP tools' output models, ``TypeAdapter``,
``model_validate``) it validates and serialises them through the models here, which
carry the field descriptions of the published JSON Schema. Each model has the record's
name and fields, in the same order; a test holds the two definitions together.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from prover import results


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


#: Record class -> its pydantic model.
MODELS: dict[type[Any], type[BaseModel]] = {
    results.ProcessCounterexample: ProcessCounterexample,
    results.LandlockCounterexample: LandlockCounterexample,
    results.FilesystemCounterexample: FilesystemCounterexample,
    results.NetworkCounterexample: NetworkCounterexample,
    results.Receipt: Receipt,
}


def record_core_schema(record: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
    """A record is kept as it is; anything else is validated as the record's model and
    made a record. A record (or its model) is serialised as the model. The JSON Schema
    is the model's, in both modes."""
    model = MODELS[record]
    inner = handler.generate_schema(model)

    def to_record(value: object, validate: core_schema.ValidatorFunctionWrapHandler) -> object:
        if isinstance(value, record):
            return value
        valid = validate(value)
        return record(**{name: getattr(valid, name) for name in model.model_fields})

    def to_model(value: object) -> object:
        if isinstance(value, record):
            return model.model_construct(**value.model_dump())
        return value

    return core_schema.no_info_wrap_validator_function(
        to_record,
        inner,
        serialization=core_schema.plain_serializer_function_ser_schema(
            to_model, return_schema=inner
        ),
    )


def counterexample_union() -> object:
    """``prover.results.Counterexample``: the four records, discriminated by ``domain``."""
    return Annotated[
        results.ProcessCounterexample
        | results.LandlockCounterexample
        | results.FilesystemCounterexample
        | results.NetworkCounterexample,
        Field(discriminator="domain"),
    ]

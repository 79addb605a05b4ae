"""The result records (plain classes) against their pydantic definitions, and the
pydantic surface the rest of the code uses."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from prover import results
from prover.results import (
    CheckOutcome,
    FilesystemCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
    Receipt,
    Verdict,
)
from prover.results import schema as results_schema

NETWORK = NetworkCounterexample(
    binary="/usr/bin/curl",
    ancestor_binary=None,
    binary_identity_required=True,
    host="api.example.com",
    destination_ip="10.0.0.1",
    trusted_gateway=False,
    port=443,
    protocol="rest",
    method="GET",
    path="/v1",
    query_params={"q": ["a", "b"]},
)


@pytest.mark.parametrize("record", sorted(results_schema.MODELS, key=lambda c: c.__name__))
def test_each_record_has_its_models_name_fields_and_defaults(record: type) -> None:
    model = results_schema.MODELS[record]
    assert model.__name__ == record.__name__
    assert tuple(name for name, _ in record._FIELDS) == tuple(model.model_fields)
    for name, default in record._FIELDS:
        info = model.model_fields[name]
        if info.is_required():
            assert default is results._REQUIRED, name
        else:
            assert default == info.default, name


def test_a_record_dumps_as_its_model_does() -> None:
    model = results_schema.NetworkCounterexample(**NETWORK.model_dump())
    for mode in ("python", "json"):
        assert NETWORK.model_dump(mode=mode) == model.model_dump(mode=mode)  # type: ignore[arg-type]
    receipt = Receipt(
        candidate_sha256="a", boundary_sha256=None, z3_version="4", elapsed_ms=1.5, readings=["x"]
    )
    assert receipt.readings == ("x",)
    assert receipt.model_dump(mode="json") == results_schema.Receipt(
        **receipt.model_dump()
    ).model_dump(mode="json")


def test_records_validate_and_serialise_inside_pydantic() -> None:
    adapter: TypeAdapter[object] = TypeAdapter(results.Counterexample)
    data = NETWORK.model_dump(mode="json")
    assert adapter.validate_python(data) == NETWORK
    assert adapter.validate_python(NETWORK) is NETWORK
    assert adapter.dump_python(NETWORK, mode="json") == data
    assert FilesystemCounterexample.model_validate({"access": "read", "path": "/x"}) == (
        FilesystemCounterexample(access="read", path="/x")
    )
    with pytest.raises(ValidationError):
        adapter.validate_python({"domain": "filesystem", "access": "exec", "path": "/x"})

    class Wrapper(BaseModel):
        counterexample: results.Counterexample | None  # type: ignore[name-defined]

    assert Wrapper(counterexample=NETWORK).model_dump(mode="json")["counterexample"] == data


def test_records_are_frozen_values() -> None:
    outcome = CheckOutcome.exceeds(
        ProcessCounterexample(field="run_as_user", boundary="sandbox", candidate="root")
    )
    assert outcome == copy.deepcopy(outcome) == pickle.loads(pickle.dumps(outcome))
    assert hash(outcome) == hash(copy.copy(outcome))
    with pytest.raises(AttributeError):
        outcome.verdict = Verdict.WITHIN  # type: ignore[misc]
    with pytest.raises(TypeError):
        CheckOutcome()  # the verdict is required
    with pytest.raises(TypeError):
        CheckOutcome(verdict=Verdict.WITHIN, unknown=1)
    with pytest.raises(TypeError):
        CheckOutcome.exceeds({"domain": "filesystem"})
    changed = outcome.model_copy(update={"readings": ["r"], "decided_by": "z3"})
    assert (changed.readings, changed.decided_by, changed.verdict) == (
        ("r",),
        "z3",
        outcome.verdict,
    )
    assert repr(outcome).startswith("CheckOutcome(verdict=<Verdict.EXCEEDS")

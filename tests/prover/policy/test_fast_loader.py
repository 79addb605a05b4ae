"""The fast loader against the schema: the same model, or declined.

For every document here, ``fast_policy`` either declines or gives records that equal the
schema's model field for field (with the same explicitly set fields), read the same way
through the pydantic surface the check uses; and it never accepts what the schema
refuses. The documents: the real-policy corpus and its variants, both sides of every
acceptance case, generated policies, and mutations of valid documents (hypothesis).
End to end, the boundary check gives the same answer with and without the fast path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel

from prover import api
from prover.errors import PolicyLoadError
from prover.policy import fast, records
from prover.policy import schema as schema_module
from prover.policy.fast import fast_policy
from prover.policy.loader import load_policy_pair, policy_data, validate_policy
from tests.corpus import corpus_entries
from tests.corpus_variants import variants
from tests.hostile.corpus import valid_policy_documents
from tests.hostile.mutate import mutated
from tests.soundness.pairs import policy_pair
from tests.support import boundary_cases

GENERATED = 80
ENDPOINT_DUMPS: tuple[dict[str, Any], ...] = (
    {"exclude": {"rules", "deny_rules", "access"}},  # an endpoint without its grants
    {"mode": "json", "exclude_none": True, "exclude": {"host", "port", "ports", "allowed_ips"}},
    {},
    {"mode": "json"},
)


def tree(value: object) -> object:
    """A model or record as nested tuples: class name, set fields, every field's value."""
    if isinstance(value, BaseModel | records.Record):
        names = (
            tuple(type(value).model_fields) if isinstance(value, BaseModel) else type(value)._NAMES
        )
        return (
            "model",
            type(value).__name__,
            tuple(sorted(value.model_fields_set)),
            tuple((name, tree(getattr(value, name))) for name in names),
        )
    if isinstance(value, tuple | list):
        return (type(value).__name__, tuple(tree(item) for item in value))
    if isinstance(value, dict):
        return ("dict", tuple((key, tree(item)) for key, item in value.items()))
    return (type(value).__name__, value)


def _hash(value: object) -> object:
    try:
        return hash(value)
    except TypeError:
        return "unhashable"


def agreement(data: object) -> str:
    """``declined`` or ``accepted``; fails where the two loaders disagree."""
    fast_model = fast_policy(data)
    try:
        model = validate_policy(data)
    except PolicyLoadError:
        model = None
    if fast_model is None:
        return "declined"
    assert model is not None, "the fast path accepted a document the schema refuses"
    assert tree(fast_model) == tree(model)
    assert repr(fast_model) == repr(model)
    assert _hash(fast_model) == _hash(model)
    for options in ({}, {"mode": "json"}, {"mode": "json", "exclude_none": True}):
        assert fast_model.model_dump(**options) == model.model_dump(**options)
    for key, rule in model.network_policies.items():
        fast_rule = fast_model.network_policies[key]
        assert fast_rule.binaries == fast_rule.binaries and _hash(fast_rule) == _hash(rule)
        for fast_endpoint, endpoint in zip(fast_rule.endpoints, rule.endpoints, strict=True):
            for options in ENDPOINT_DUMPS:
                assert fast_endpoint.model_dump(**options) == endpoint.model_dump(**options)
            update = {"tls": None, "access": None}
            assert tree(fast_endpoint.model_copy(update=update)) == tree(
                endpoint.model_copy(update=update)
            )
            bare = {"host": endpoint.host, "ports": endpoint.ports}
            assert tree(type(fast_endpoint).model_construct(**bare)) == tree(
                type(endpoint).model_construct(**bare)
            )
    return "accepted"


def _data(text: str | bytes) -> Iterator[object]:
    for reference in (False, True):
        try:
            yield policy_data(text, reference=reference)
        except PolicyLoadError:
            continue


def _texts() -> Iterator[tuple[str, str]]:
    for entry in corpus_entries():
        yield entry.file, entry.text
        try:
            found = list(variants(entry.text))
        except (AttributeError, TypeError):  # a corpus document the variants cannot edit
            found = []
        for index, variant in enumerate(found):
            yield f"{entry.file}:{index}", variant.text
    for case in boundary_cases():
        for role in ("candidate", "boundary"):
            if isinstance(case.get(role), str):
                yield f"{case['id']}:{role}", case[role]
    for index in range(GENERATED):
        pair = policy_pair(11, index)
        yield f"generated {index}", pair.candidate
        yield f"generated {index}:boundary", pair.boundary


def test_the_fast_path_gives_the_schemas_model_or_declines() -> None:
    counts = {"accepted": 0, "declined": 0}
    for name, text in _texts():
        for data in _data(text):
            try:
                counts[agreement(data)] += 1
            except AssertionError as exc:
                raise AssertionError(f"{name}: {exc}") from exc
    # Not vacuous: the ordinary documents take the fast path.
    assert counts["accepted"] > 4 * counts["declined"] > 0, counts


def _endpoint(**fields: object) -> dict[str, Any]:
    endpoint: dict[str, Any] = {"host": "api.example.com", "port": 443, **fields}
    return {"version": 1, "network_policies": {"r": {"endpoints": [endpoint]}}}


def _middleware(**fields: object) -> dict[str, Any]:
    return {"version": 1, "network_middlewares": {"m": {"middleware": "x", **fields}}}


#: One document per rule of the schema, on both sides of it.
EDGES: tuple[object, ...] = (
    None,
    [],
    {},
    {"version": True},
    {"version": 1.0},
    {"version": "1"},
    {"version": 2},
    {"version": 1, "cedar_policy": None},
    {"version": 1, "unknown": 1},
    {"version": 1, "inference": {"allowed_routes": ["local"]}},
    {"version": 1, "filesystem_policy": {"read_only": ["usr"]}},
    {"version": 1, "filesystem_policy": {"read_only": ["/usr/../etc"]}},
    {"version": 1, "filesystem_policy": {"read_only": ["/usr//./lib/", "/"]}},
    {"version": 1, "filesystem_policy": {"read_only": "/usr"}},
    {"version": 1, "filesystem_policy": {"include_workdir": 1}},
    {"version": 1, "landlock": {"compatibility": "best-effort"}},
    {"version": 1, "landlock": {"compatibility": "hard_requirement"}},
    {"version": 1, "process": {"run_as_user": 1000}},
    {"version": 1, "process": {"run_as_user": "1000", "run_as_group": True}},
    _endpoint(port=65535),
    _endpoint(port=65536),
    _endpoint(port=-1),
    _endpoint(port=True),
    _endpoint(port=443.0),
    _endpoint(ports=[80, 65536]),
    _endpoint(protocol="rest", rules=[]),
    _endpoint(protocol="rest", deny_rules=[]),
    _endpoint(protocol="rest", rules=[{}]),
    _endpoint(protocol="rest", rules=[{"allow": None}]),
    _endpoint(protocol="rest", rules=[{"allow": {"method": "GET", "query": {"a": "b"}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": {"any": ["x", "y"]}}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": {"any": []}}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": {"any": [1]}}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": {"any": "x"}}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": {"glob": "x*"}}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": {"glob": "x", "any": []}}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": {"regex": "x"}}}}]),
    _endpoint(protocol="rest", rules=[{"allow": {"query": {"a": None}}}]),
    _endpoint(protocol="mcp", rules=[{"allow": {"tool": {"any": ["a*"]}}}]),
    _endpoint(protocol="mcp", rules=[{"allow": {"tool": {"glob": "a*"}}}]),
    _endpoint(protocol="mcp", rules=[{"allow": {"params": {"a": [1, 2.5, {"b": "c"}]}}}]),
    _endpoint(protocol="mcp", rules=[{"allow": {"params": {"a": None}}}]),
    _endpoint(protocol="mcp", rules=[{"allow": {"params": {"a": float("inf")}}}]),
    _endpoint(protocol="mcp", mcp={"max_body_bytes": 4_294_967_295, "versions": ["1"]}),
    _endpoint(protocol="MCP", mcp={"strict_tool_names": True}),
    _endpoint(protocol="rest", mcp={"strict_tool_names": True}),
    _endpoint(mcp={"max_body_bytes": 4_294_967_296}),
    _endpoint(json_rpc={"max_body_bytes": -1}),
    _endpoint(credential_binding={"provider": "p"}),
    _endpoint(credential_binding={}),
    _endpoint(graphql_persisted_queries={"q": {"operation_type": "query", "fields": ["a"]}}),
    _endpoint(graphql_persisted_queries={"q": {"operation_name": "n"}}),
    _endpoint(allowed_ips=["10.0.0.0/8"], tls="skip", enforcement="enforce", access="full"),
    _endpoint(allowed_ips="10.0.0.0/8"),
    {"version": 1, "network_policies": {"r": {"binaries": [{"path": "/bin/x"}]}}},
    {"version": 1, "network_policies": {"r": {"binaries": [{}]}}},
    {"version": 1, "network_policies": {"r": {"binaries": [{"path": "/x", "harness": 1}]}}},
    {"version": 1, "network_policies": {"r": None}},
    {"version": 1, "network_policies": []},
    _middleware(order=-2_147_483_648, on_error="fail_open", config={"a": {"b": [1]}}),
    _middleware(order=2_147_483_648),
    _middleware(on_error="fail"),
    _middleware(config={"a": None}),
    _middleware(endpoints={"include": ["a"], "exclude": []}),
    {"version": 1, "network_middlewares": {"m": {"name": "m"}}},
)


@pytest.mark.parametrize("document", EDGES, ids=range(len(EDGES)))
def test_edge_documents_agree(document: object) -> None:
    agreement(document)


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(document=mutated(valid_policy_documents(), gentle=True))
def test_gentle_mutations_agree(document: object) -> None:
    agreement(document)


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(document=mutated(valid_policy_documents()))
def test_hostile_mutations_agree(document: object) -> None:
    agreement(document)


@pytest.mark.parametrize("name", sorted(records.RECORDS))
def test_each_record_has_its_models_fields_and_defaults(name: str) -> None:
    model = getattr(schema_module, name)
    record = records.RECORDS[name]
    assert record._NAMES == tuple(model.model_fields)
    for field_name, default in record.FIELDS:
        info = model.model_fields[field_name]
        expected = info.default_factory() if info.default_factory else info.default  # type: ignore[call-arg]
        assert (default() if default is dict else default) == (
            None if info.is_required() else expected
        ), field_name


def test_records_are_frozen_and_refuse_unknown_fields() -> None:
    policy = fast_policy({"version": 1})
    assert policy is not None
    with pytest.raises(AttributeError):
        policy.version = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        records.BinarySection(path="/x", harness=True)


def test_a_pair_is_records_only_when_both_sides_are_read_fast() -> None:
    plain = "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n"
    # Valid, but a null inside an open map is left to the schema.
    declined = "version: 1\nnetwork_middlewares:\n  m: {middleware: x, config: {a: null}}\n"
    assert fast_policy(policy_data(declined, reference=True)) is None
    for candidate, boundary in ((plain, plain), (plain, declined), (declined, plain)):
        kinds = {
            isinstance(p, records.Record)
            for p in load_policy_pair(candidate, boundary, reference=True)
            if p is not None
        }
        assert kinds == {candidate == boundary == plain}


def _outcome(candidate: str, boundary: str, reference: bool) -> tuple[object, object]:
    check = api.check_boundary(candidate, boundary, reference_semantics=reference)
    receipt = check.receipt.model_copy(update={"elapsed_ms": 0.0})
    return check.outcome, receipt


def test_checks_answer_the_same_with_and_without_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pairs = [
        (case["candidate"], case["boundary"])
        for case in boundary_cases()
        if isinstance(case.get("candidate"), str) and isinstance(case.get("boundary"), str)
    ]
    pairs += [(p.candidate, p.boundary) for p in map(lambda i: policy_pair(5, i), range(40))]
    with_fast = [_outcome(c, b, r) for c, b in pairs for r in (False, True)]
    monkeypatch.setattr(fast, "fast_policy", lambda data: None)
    without = [_outcome(c, b, r) for c, b in pairs for r in (False, True)]
    assert with_fast == without

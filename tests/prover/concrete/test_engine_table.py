"""The concrete evaluator against OpenShell's own decisions (issue 25).

``tests/data/engine_decisions.yaml`` holds requests and policies with the decision of
OpenShell's policy engine built from its source, and the upstream code that decides each
row. Here each row is judged by the prover's default semantics: the policy read as the
extended analysis reads it (both bounds), the raw request-target split as the proxy
splits it (``prover.concrete.request``), the path left for the evaluator to canonicalise.
The upstream code is not needed: the table carries its answers.
"""

from __future__ import annotations

import ipaddress
from functools import cache
from typing import Any

import pytest
import yaml

from prover.concrete import network_allows
from prover.concrete.request import canonical_path, parse_query
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.policy.model import NetworkAction
from prover.policy.shape import shape_problem
from tests.support import DATA


@cache
def _table() -> dict[str, Any]:
    return yaml.safe_load((DATA / "engine_decisions.yaml").read_text(encoding="utf-8"))


ROWS = _table()["rows"]
PASSES = {"allow": True, "audit": True, "deny": False, "error": False}


def _row_id(row: dict[str, Any]) -> str:
    request = row["request"]
    parts = [row["policy"], request.get("method", "L4"), request.get("target", ""), request["host"]]
    return " ".join(str(part) for part in parts if part)


def _action(request: dict[str, Any]) -> NetworkAction | None:
    """The row's request as an action; ``None`` when its query does not parse (the proxy
    refuses it, ``l7/rest.rs`` ``parse_query_params``)."""
    binary = request["binary"]
    ancestors = request.get("ancestors") or [binary]
    rest = "method" in request
    path, query = None, ()
    if rest:
        path, _, raw_query = request["target"].partition("?")
        parsed = parse_query(raw_query)
        if parsed is None:
            return None
        query = parsed
    return NetworkAction(
        host=request["host"],
        port=request["port"],
        destination_ip=ipaddress.ip_address("8.8.8.8"),
        protocol="rest" if rest else "l4",
        method=request.get("method"),
        path=path,
        query=query,
        binary=binary,
        ancestor_binary=ancestors[0],
        binary_identity_required=True,
    )


def test_the_table_covers_every_matcher() -> None:
    matchers = {row["matcher"] for row in ROWS}
    assert matchers >= {
        "host",
        "port",
        "binary",
        "method",
        "path",
        "query",
        "enforcement",
        "access",
        "deny",
        "endpoint path",
    }
    assert {row["engine"] for row in ROWS} == set(PASSES)


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(row) for row in ROWS])
def test_the_default_semantics_decides_as_the_engine(row: dict[str, Any]) -> None:
    authored = load_policy(_table()["policies"][row["policy"]])
    problem = shape_problem(authored, extended=True)
    if "outside_model" in row:
        assert problem is not None, "a construct outside the model must be unsupported"
        return
    assert problem is None
    reading = read_policy(authored)
    assert not reading.opaque
    action = _action(row["request"])
    expected = PASSES[row["engine"]]
    if action is None:
        assert not expected
        return
    upper, lower = network_allows(reading.upper, action), network_allows(reading.lower, action)
    assert upper == lower == expected, row["upstream"]


CANONICAL = [row for row in ROWS if "canonical" in row]


@pytest.mark.parametrize("row", CANONICAL, ids=[_row_id(row) for row in CANONICAL])
def test_paths_are_canonicalised_as_the_proxy_does(row: dict[str, Any]) -> None:
    """``l7/path.rs`` ``canonicalize_request_target``: the path the engine matched."""
    path = row["request"]["target"].partition("?")[0]
    assert canonical_path(path) == row["canonical"]


QUERIES = [row for row in ROWS if "query_params" in row]


@pytest.mark.parametrize("row", QUERIES, ids=[_row_id(row) for row in QUERIES])
def test_queries_are_parsed_as_the_proxy_does(row: dict[str, Any]) -> None:
    """``l7/rest.rs`` ``parse_query_params``: the query the engine matched."""
    parsed = parse_query(row["request"]["target"].partition("?")[2])
    assert parsed is not None
    assert {key: list(values) for key, values in parsed} == row["query_params"]

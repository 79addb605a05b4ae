"""Issue 25: REST matchers read as OpenShell's engine reads them, at the check level.

Each example of the issue, in the default semantics, and the reference prover's reading
kept by ``--reference-semantics``. The engine's answers behind them are rows of
``tests/data/engine_decisions.yaml`` (``test_engine_table.py``).
"""

from __future__ import annotations

import ipaddress

import pytest
import z3

from prover.api import check_boundary
from prover.concrete import network_allows
from prover.encode.action import new_action
from prover.encode.pins import pin_regexes
from prover.encode.solver import witness_is_canonical
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.policy.model import NetworkAction

STANDARD_METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}


def policy(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return (
        "version: 1\nnetwork_policies:\n  r:\n    name: r\n    endpoints:\n"
        "      - host: api.example.com\n        port: 443\n        protocol: rest\n"
        f"        enforcement: enforce\n{body}"
        "    binaries:\n      - path: /usr/bin/curl\n"
    )


ANY = ("rules:", "  - allow: {method: '*', path: /**}")


def verdict(candidate: str, boundary: str, *, reference: bool = False) -> str:
    outcome = check_boundary(candidate, boundary, reference_semantics=reference).outcome
    return outcome.verdict.value


def test_a_boundary_rule_without_path_allows_nothing() -> None:
    candidate = policy("rules:", "  - allow: {method: GET, path: /x}")
    boundary = policy("rules:", "  - allow: {method: GET}")
    result = check_boundary(candidate, boundary)
    assert result.outcome.verdict.value == "exceeds_boundary"
    witness = result.outcome.counterexample
    assert (witness.method, witness.path) == ("GET", "/x")
    assert "REST allow rule without path (allows nothing)" in result.receipt.readings
    # The reference prover reads the rule as any path.
    assert verdict(candidate, boundary, reference=True) == "within_boundary"


def test_a_candidate_rule_without_path_adds_nothing() -> None:
    candidate = policy("rules:", "  - allow: {method: GET, path: /a}", "  - allow: {method: POST}")
    boundary = policy("rules:", "  - allow: {method: GET, path: /a}")
    assert verdict(candidate, boundary) == "within_boundary"
    assert verdict(candidate, boundary, reference=True) == "exceeds_boundary"


def test_dropping_a_deny_rule_without_path_is_not_an_exceed() -> None:
    boundary = policy(*ANY, "deny_rules:", "  - {method: DELETE}")
    assert verdict(policy(*ANY), boundary) == "within_boundary"
    assert verdict(policy(*ANY), boundary, reference=True) == "exceeds_boundary"


def test_a_deny_rule_with_a_path_still_fires() -> None:
    boundary = policy(*ANY, "deny_rules:", "  - {method: DELETE, path: /**}")
    assert verdict(policy(*ANY), boundary) == "exceeds_boundary"


def test_an_empty_query_value_gives_no_witness() -> None:
    candidate = policy("rules:", "  - allow: {method: GET, path: /a, query: {v: ''}}")
    boundary = policy("rules:", "  - allow: {method: GET, path: /b}")
    result = check_boundary(candidate, boundary)
    assert result.outcome.verdict.value == "within_boundary"
    assert result.outcome.counterexample is None
    reference = check_boundary(candidate, boundary, reference_semantics=True).outcome
    assert reference.counterexample.query_params == {"v": [""]}


def test_an_empty_query_value_makes_a_deny_rule_inert() -> None:
    boundary = policy(*ANY, "deny_rules:", "  - {method: GET, path: /**, query: {v: ''}}")
    assert verdict(policy(*ANY), boundary) == "within_boundary"
    assert verdict(policy(*ANY), boundary, reference=True) == "exceeds_boundary"


def test_a_lower_case_deny_method_blocks_the_upper_case_request() -> None:
    deny_lower = policy(*ANY, "deny_rules:", "  - {method: delete, path: /b/**}")
    deny_upper = policy(*ANY, "deny_rules:", "  - {method: DELETE, path: /b/**}")
    assert verdict(deny_lower, deny_upper) == "within_boundary"
    assert verdict(deny_upper, deny_lower) == "within_boundary"


def test_a_method_only_witness_names_an_upper_case_method() -> None:
    listed = [*sorted(STANDARD_METHODS), "A", "B"]
    boundary = policy("rules:", *(f"  - allow: {{method: {m}, path: /**}}" for m in listed))
    witness = check_boundary(policy(*ANY), boundary).outcome.counterexample
    assert witness.method not in listed
    assert witness.method == witness.method.upper()


def test_a_wider_method_is_shown_with_a_standard_method() -> None:
    boundary = policy("rules:", "  - allow: {method: GET, path: /**}")
    witness = check_boundary(policy(*ANY), boundary).outcome.counterexample
    assert witness.method in STANDARD_METHODS - {"GET", "HEAD"}


def _action(method: str, path: str) -> NetworkAction:
    return NetworkAction(
        host="api.example.com",
        port=443,
        destination_ip=ipaddress.ip_address("8.8.8.8"),
        protocol="rest",
        method=method,
        path=path,
    )


def _engine(text: str):
    return read_policy(load_policy(text)).upper


@pytest.mark.parametrize(
    ("lines", "method", "path", "allowed"),
    [
        # sandbox-policy.rego method_matches: upper(request) == upper(rule)
        (("rules:", "  - allow: {method: GET, path: /a/**}"), "get", "/a/x", True),
        (("rules:", "  - allow: {method: GET, path: /a/**}"), "head", "/a/x", True),
        ((*ANY, "deny_rules:", "  - {method: delete, path: /b/**}"), "delete", "/b/x", False),
        ((*ANY, "deny_rules:", "  - {method: DELETE, path: /b/**}"), "Delete", "/b/x", False),
        # l7/path.rs canonicalize_request_target: a raw %2F is refused
        (ANY, "GET", "/a%2Fb", False),
        (ANY, "GET", "/a%2fb", False),
        (ANY, "GET", "/a/b", True),
    ],
)
def test_the_concrete_evaluator_judges_requests_as_the_engine(
    lines: tuple[str, ...], method: str, path: str, allowed: bool
) -> None:
    assert network_allows(_engine(policy(*lines)), _action(method, path)) is allowed


def test_the_reference_model_compares_the_request_method_as_sent() -> None:
    from prover.policy.normalize import normalize

    reference = normalize(load_policy(policy("rules:", "  - allow: {method: GET, path: /a/**}")))
    assert not network_allows(reference, _action("get", "/a/x"))
    assert network_allows(reference, _action("GET", "/a/b%2Fc"))  # literal text


def test_engine_witnesses_are_upper_case_tokens() -> None:
    engine = _engine(policy(*ANY))
    ctx = z3.Context()
    action = new_action(ctx, (engine,), identity=False)
    pin = pin_regexes(action)["method"]
    assert z3.is_false(z3.simplify(z3.InRe(z3.StringVal("get", ctx), pin)))
    assert z3.is_true(z3.simplify(z3.InRe(z3.StringVal("GET", ctx), pin)))
    assert not witness_is_canonical(_action("get", "/a"), engine=True)
    assert witness_is_canonical(_action("get", "/a"))
    reference = new_action(z3.Context(), (), identity=False)
    assert not reference.engine

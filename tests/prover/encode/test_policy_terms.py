"""``policy_allows`` in Z3 agrees with the concrete evaluator on concrete actions."""

from __future__ import annotations

import ipaddress

import pytest
import z3
from hypothesis import given, settings

from prover.concrete.network import network_allows
from prover.encode.action import new_action
from prover.encode.network import PolicyTerms, policy_allows
from prover.encode.strings import StringAtoms
from prover.policy.model import NetworkAction, Policy
from tests.prover.encode.helpers import endpoint, holds, http, rest, single
from tests.prover.encode.strategies import policy_and_action


def z3_allows(p: Policy, concrete: NetworkAction) -> bool:
    ctx = z3.Context()
    action = new_action(ctx, [p], identity=concrete.binary_identity_required)
    return holds(policy_allows(p, action, concrete.binary_identity_required), action, concrete)


def z3_allows_with_atoms(p: Policy, concrete: NetworkAction) -> bool:
    """The solver's form: strings only through atoms, fixed to their truth on
    ``concrete``'s strings."""
    ctx = z3.Context()
    identity = concrete.binary_identity_required
    action = new_action(ctx, [p], identity=identity)
    atoms = StringAtoms(action.globs)
    term = PolicyTerms(p, action, identity, atoms).allows()
    fields = {
        "host": concrete.host,
        "method": concrete.method or "GET",
        "path": concrete.path or "/",
        "binary": concrete.binary or "",
        "ancestor": concrete.ancestor_binary or "",
    }
    facts = [
        atoms.variable(key) == z3.BoolVal(atoms.holds_for(key, fields[key[0]]), ctx)
        for key in term.atoms
    ]
    return holds(z3.And(term.expr, *facts), action, concrete)


def act(**fields: object) -> NetworkAction:
    values: dict[str, object] = {
        "host": "api.example.com",
        "port": 443,
        "destination_ip": ipaddress.ip_address("8.8.8.8"),
    }
    values.update(fields)
    if isinstance(values["destination_ip"], str):
        values["destination_ip"] = ipaddress.ip_address(values["destination_ip"])
    return NetworkAction(**values)  # type: ignore[arg-type]


CURL = "/usr/bin/curl"
GET_ITEMS = {"protocol": "rest", "method": "GET", "path": "/v1/items"}

CASES = [
    ("l4 endpoint allows a rest request", single(endpoint("api.example.com")), act(**GET_ITEMS)),
    ("rest endpoint refuses l4", single(rest("api.example.com", access="full")), act()),
    (
        "GET also matches HEAD",
        single(rest("api.example.com", allow=[http("get", "/v1/**")])),
        act(protocol="rest", method="HEAD", path="/v1/items"),
    ),
    (
        "lower-case action method does not match",
        single(rest("api.example.com", allow=[http("POST")])),
        act(protocol="rest", method="post", path="/"),
    ),
    (
        "deny of another rule applies to the ancestor binary",
        single(rest("api.example.com", access="full"), binaries=[CURL]),
        act(
            **GET_ITEMS,
            binary=CURL,
            ancestor_binary="/usr/bin/python",
            binary_identity_required=True,
        ),
    ),
    (
        "wildcard host refuses a private address",
        single(endpoint("*.example.com")),
        act(destination_ip="10.0.0.1"),
    ),
    (
        "exact host allows a private address",
        single(endpoint("api.example.com")),
        act(destination_ip="10.0.0.1"),
    ),
    (
        "control port is refused for an exact host",
        single(endpoint("api.example.com", [6443])),
        act(port=6443),
    ),
    (
        "trusted gateway reaches link-local",
        single(endpoint("host.docker.internal")),
        act(host="host.docker.internal", destination_ip="169.254.1.1", trusted_gateway=True),
    ),
    (
        "trusted gateway never reaches the metadata address",
        single(endpoint("host.docker.internal")),
        act(host="host.docker.internal", destination_ip="169.254.169.254", trusted_gateway=True),
    ),
    (
        "mapped address is not inside an IPv4 CIDR",
        single(endpoint("api.example.com", allowed_ips=["8.8.8.0/24"])),
        act(destination_ip="::ffff:8.8.8.8"),
    ),
    (
        "query star refuses a dotted value",
        single(rest("api.example.com", allow=[http("GET", "", {"q": None})])),
        act(protocol="rest", method="GET", path="/", query=(("q", ("a", "a.b")),)),
    ),
    (
        "rule without binaries matches nothing in identity mode",
        single(endpoint("api.example.com"), binaries=[]),
        act(binary=CURL, ancestor_binary=CURL, binary_identity_required=True),
    ),
]


@pytest.mark.parametrize(("p", "concrete"), [pytest.param(p, a, id=name) for name, p, a in CASES])
def test_policy_allows_agrees_with_the_evaluator_on_edge_cases(
    p: Policy, concrete: NetworkAction
) -> None:
    assert z3_allows(p, concrete) is network_allows(p, concrete)
    assert z3_allows_with_atoms(p, concrete) is network_allows(p, concrete)


def test_deny_in_one_rule_blocks_a_grant_of_another_rule() -> None:
    from tests.prover.encode.helpers import policy, rule

    p = policy(
        rule("grant", [rest("api.example.com", access="full")], [CURL]),
        rule("deny", [rest("api.example.com", access="full", deny=[http("POST")])], ["/usr/**"]),
    )
    post = act(
        protocol="rest",
        method="POST",
        path="/",
        binary=CURL,
        ancestor_binary=CURL,
        binary_identity_required=True,
    )
    assert not network_allows(p, post)
    assert not z3_allows(p, post)


def test_policy_terms_are_built_once_and_reused() -> None:
    ctx = z3.Context()
    p = single(endpoint("api.example.com"))
    terms = PolicyTerms(p, new_action(ctx, [p], identity=True), True)
    assert terms.grant((0, 0)) is terms.grant((0, 0))
    assert terms.ip_ok((0, 0)) is terms.ip_ok((0, 0))


@settings(max_examples=120, deadline=None)
@given(case=policy_and_action())
def test_policy_allows_agrees_with_the_evaluator(case: tuple[Policy, NetworkAction]) -> None:
    p, concrete = case
    expected = network_allows(p, concrete)
    assert z3_allows(p, concrete) is expected
    assert z3_allows_with_atoms(p, concrete) is expected

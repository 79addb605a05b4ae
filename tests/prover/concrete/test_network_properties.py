"""Properties of network evaluation over small random actions (spec §9.3)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from prover.concrete.network import network_allows
from prover.policy.model import Endpoint, NetworkAction
from tests.prover.concrete.policies import HOST, allow, policy, preset, req, rest, rule

_HOSTS = st.sampled_from([HOST, "API.example.com", "x.example.com", "host.docker.internal"])
_IPS = st.sampled_from(["8.8.8.8", "10.0.0.1", "127.0.0.1", "::ffff:10.0.0.1", "169.254.1.1"])
_METHODS = st.sampled_from(["GET", "HEAD", "POST", "get", "DELETE"])
_PATHS = st.sampled_from(["/", "/v1/x", "/v1/x/y", "/admin"])
_REST_ENDPOINTS = st.sampled_from(
    [
        rest(allow("GET", "/v1/*")),
        rest(allow("*", "/**"), path="/v1/**"),
        preset("read-only"),
        rest(allow("POST", "/admin"), host="*.example.com"),
        rest(allow("GET"), host="**.internal"),
    ]
)


@st.composite
def _rest_actions(draw: st.DrawFn) -> NetworkAction:
    return req(
        draw(_METHODS),
        draw(_PATHS),
        host=draw(_HOSTS),
        ip=draw(_IPS),
        port=draw(st.sampled_from([443, 80])),
        trusted=draw(st.booleans()),
    )


@settings(max_examples=300, deadline=None)
@given(_REST_ENDPOINTS, _rest_actions())
def test_an_l4_endpoint_allows_whatever_the_rest_endpoint_it_replaces_allows(
    endpoint: Endpoint, action: NetworkAction
) -> None:
    as_l4 = replace(endpoint, layer="l4", path="", access=None, allow_rules=(), deny_rules=())
    if network_allows(policy(rule("n", endpoint)), action):
        assert network_allows(policy(rule("n", as_l4)), action)


@settings(max_examples=200, deadline=None)
@given(_REST_ENDPOINTS, _rest_actions())
def test_rest_endpoints_never_allow_an_l4_connection(
    endpoint: Endpoint, action: NetworkAction
) -> None:
    l4_action = replace(action, protocol="l4", method=None, path=None, query=())
    assert not network_allows(policy(rule("n", endpoint)), l4_action)


@settings(max_examples=200, deadline=None)
@given(_REST_ENDPOINTS, _rest_actions())
def test_host_case_never_changes_the_verdict(endpoint: Endpoint, action: NetworkAction) -> None:
    p = policy(rule("n", endpoint))
    lowered = replace(action, host=action.host.lower())
    upper = replace(action, host=action.host.upper())
    assert network_allows(p, action) is network_allows(p, lowered) is network_allows(p, upper)

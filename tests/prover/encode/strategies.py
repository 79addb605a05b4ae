"""Hypothesis strategies over the modelled policy grammar and concrete actions."""

from __future__ import annotations

import ipaddress

from hypothesis import strategies as st

from prover.policy.model import Endpoint, HttpRule, NetworkAction, Policy, Rule
from tests.prover.encode.helpers import endpoint, http, policy, rule

HOSTS = (
    "api.example.com",
    "*.example.com",
    "api*.example.com",
    "**.example.com",
    "other.test",
    "host.docker.internal",
    "*.internal",
    "8.8.8.8",
)
PORTS = (443, 80, 6443)
CIDRS = ("8.8.8.0/24", "10.0.0.0/8", "2001:db8::/32", "::ffff:8.8.8.0/120", "8.8.0.0/16")
BINARIES = ("/usr/bin/curl", "/usr/bin/*", "/usr/**", "/**", "/opt/tool")
METHODS = ("GET", "HEAD", "POST", "*", "get", "DELETE")
RULE_PATHS = ("", "/v1/**", "/v1/items", "/**/x", "/v1/*")
ENDPOINT_PATHS = ("", "/v1/**", "/**")
QUERY_VALUES = (None, "a", "a.b", "")

ACTION_HOSTS = (
    "api.example.com",
    "x.example.com",
    "deep.api.example.com",
    "api-v2.example.com",
    "other.test",
    "host.docker.internal",
    "8.8.8.8",
    "example.com",
)
ACTION_IPS = (
    "8.8.8.8",
    "8.8.4.4",
    "10.0.0.1",
    "127.0.0.1",
    "169.254.1.1",
    "169.254.169.254",
    "2001:db8::1",
    "::ffff:8.8.8.8",
    "fe80::1",
    "fc00::1",
)
ACTION_METHODS = ("GET", "HEAD", "POST", "OPTIONS", "get", "DELETE")
ACTION_PATHS = ("/", "/v1/items", "/v1/x/y", "/x", "/v1/")
ACTION_VALUES = ("a", "a.b", "", "zz")
ACTION_BINARIES = ("/usr/bin/curl", "/usr/bin/python", "/opt/tool", "/usr/lib/x")


@st.composite
def http_rules(draw: st.DrawFn) -> HttpRule:
    keys = draw(st.lists(st.sampled_from(("q", "r")), max_size=2, unique=True))
    query = {k: draw(st.sampled_from(QUERY_VALUES)) for k in keys}
    return http(draw(st.sampled_from(METHODS)), draw(st.sampled_from(RULE_PATHS)), query)


@st.composite
def endpoints(draw: st.DrawFn) -> Endpoint:
    host = draw(st.sampled_from(HOSTS))
    ports = draw(st.lists(st.sampled_from(PORTS), min_size=1, max_size=2, unique=True))
    ips = draw(st.lists(st.sampled_from(CIDRS), max_size=2, unique=True))
    if draw(st.booleans()):
        return endpoint(host, ports, allowed_ips=ips)
    access = draw(st.sampled_from((None, None, "read-only", "read-write", "full")))
    allow = () if access else draw(st.lists(http_rules(), min_size=1, max_size=2))
    return endpoint(
        host,
        ports,
        layer="rest",
        path=draw(st.sampled_from(ENDPOINT_PATHS)),
        allowed_ips=ips,
        access=access,
        allow=allow,
        deny=draw(st.lists(http_rules(), max_size=1)),
    )


@st.composite
def rules(draw: st.DrawFn, key: str) -> Rule:
    return rule(
        key,
        draw(st.lists(endpoints(), min_size=1, max_size=2)),
        draw(st.lists(st.sampled_from(BINARIES), max_size=2, unique=True)),
    )


@st.composite
def policies(draw: st.DrawFn, max_rules: int = 2) -> Policy:
    count = draw(st.integers(min_value=0, max_value=max_rules))
    return policy(*(draw(rules(f"r{i}")) for i in range(count)))


@st.composite
def actions(draw: st.DrawFn) -> NetworkAction:
    identity = draw(st.booleans())
    rest = draw(st.booleans())
    query: tuple[tuple[str, tuple[str, ...]], ...] = ()
    if rest:
        keys = draw(st.lists(st.sampled_from(("q", "r", "s")), max_size=2, unique=True))
        query = tuple(
            (k, tuple(draw(st.lists(st.sampled_from(ACTION_VALUES), min_size=1, max_size=2))))
            for k in keys
        )
    return NetworkAction(
        host=draw(st.sampled_from(ACTION_HOSTS)),
        port=draw(st.sampled_from(PORTS)),
        destination_ip=ipaddress.ip_address(draw(st.sampled_from(ACTION_IPS))),
        protocol="rest" if rest else "l4",
        method=draw(st.sampled_from(ACTION_METHODS)) if rest else None,
        path=draw(st.sampled_from(ACTION_PATHS)) if rest else None,
        query=query,
        binary=draw(st.sampled_from(ACTION_BINARIES)) if identity else None,
        ancestor_binary=draw(st.sampled_from(ACTION_BINARIES)) if identity else None,
        binary_identity_required=identity,
        trusted_gateway=draw(st.booleans()),
    )


@st.composite
def policy_and_action(draw: st.DrawFn) -> tuple[Policy, NetworkAction]:
    """A policy and an action that is often near the policy's own endpoints."""
    from tests.prover.encode.samples import candidate_actions

    p = draw(policies())
    identity = draw(st.booleans())
    near = candidate_actions(p, identity, per_endpoint=30)
    if near and draw(st.integers(0, 3)) > 0:
        return p, draw(st.sampled_from(near))
    return p, draw(actions())

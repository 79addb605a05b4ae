"""Network evaluation of spec §9.1, §9.3 and §9.4 on small hand-built policies."""

from __future__ import annotations

import ipaddress

import pytest

from prover.concrete.network import (
    DenyEntry,
    GrantEntry,
    denying_entries,
    granting_entries,
    ip_ok,
    method_matches,
    network_allows,
)
from prover.policy.model import AccessPreset, HttpRule, NetworkAction
from tests.prover.concrete.policies import (
    CURL,
    HOST,
    allow,
    conn,
    l4,
    policy,
    preset,
    req,
    rest,
    rule,
)

# ---------------------------------------------------------------------------------------
# Methods


@pytest.mark.parametrize(
    ("policy_method", "action_method", "expected"),
    [
        ("GET", "GET", True),
        ("GET", "HEAD", True),
        ("get", "GET", True),
        ("Get", "HEAD", True),
        ("GET", "get", False),
        ("GET", "POST", False),
        ("GET", "OPTIONS", False),
        ("HEAD", "HEAD", True),
        ("HEAD", "GET", False),
        ("post", "POST", True),
        ("post", "post", False),
        ("*", "GET", True),
        ("*", "anything", True),
        ("*", "X" * 65, True),
        ("X" * 65, "X" * 65, True),
        ("X" * 65, "X" * 64, False),
        ("", "GET", False),
        ("PATCH", "PATCH", True),
    ],
)
def test_method_matching(policy_method: str, action_method: str, expected: bool) -> None:
    assert method_matches(policy_method, action_method) is expected


# ---------------------------------------------------------------------------------------
# Layers, connections, paths


def test_l4_endpoint_allows_connections_and_any_rest_request() -> None:
    p = policy(rule("n", l4()))
    assert network_allows(p, conn())
    assert network_allows(p, req("DELETE", "/anything/at/all"))
    assert network_allows(p, req("BREW", "/", query={"x": ("a.b",)}))


def test_rest_endpoint_never_allows_an_l4_connection() -> None:
    p = policy(rule("n", rest(allow("*", "/**"))))
    assert network_allows(p, req("POST", "/x"))
    assert not network_allows(p, conn())


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (conn(), True),
        (conn(port=80), False),
        (conn(host="other.example.com"), False),
        (conn(host="API.EXAMPLE.COM"), True),
        (conn(port=8443), True),
    ],
)
def test_connection_needs_an_effective_port_and_the_host(
    action: NetworkAction, expected: bool
) -> None:
    p = policy(rule("n", l4(ports=(443, 8443))))
    assert network_allows(p, action) is expected


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (req("GET", "/v1/items/7"), True),
        (req("HEAD", "/v1/items/7"), True),
        (req("GET", "/v1/items/7/parts"), False),
        (req("GET", "/v2/items/7"), False),
        (req("POST", "/v1/items/7"), False),
        (req("POST", "/v1/orders"), True),
        (req("POST", "/v1/orders/x"), False),
        (req("GET", "/v1/items/é"), True),
    ],
)
def test_rest_rules_combine_endpoint_path_method_and_rule_path(
    action: NetworkAction, expected: bool
) -> None:
    endpoint = rest(allow("GET", "/v1/items/*", 0), allow("POST", "/v1/orders", 1), path="/v1/**")
    assert network_allows(policy(rule("n", endpoint)), action) is expected


def test_endpoint_path_selector_applies_even_to_a_full_access_preset() -> None:
    p = policy(rule("n", preset("full", path="/v1/**")))
    assert network_allows(p, req("DELETE", "/v1/x"))
    assert not network_allows(p, req("DELETE", "/v2/x"))
    assert not network_allows(p, req("GET", "/v1"))


@pytest.mark.parametrize(
    ("access", "allowed", "refused"),
    [
        ("read-only", ("GET", "HEAD", "OPTIONS"), ("POST", "PUT", "PATCH", "DELETE", "get")),
        ("read-write", ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"), ("DELETE", "TRACE")),
        ("full", ("GET", "DELETE", "TRACE", "brew"), ()),
    ],
)
def test_access_presets_grant_their_methods_on_any_path(
    access: AccessPreset, allowed: tuple[str, ...], refused: tuple[str, ...]
) -> None:
    p = policy(rule("n", preset(access)))
    for method in allowed:
        assert network_allows(p, req(method, "/deep/path")), method
    for method in refused:
        assert not network_allows(p, req(method, "/deep/path")), method


def test_rest_allow_rule_query_must_match() -> None:
    p = policy(rule("n", rest(allow("GET", "/search", q=None, lang="en"))))
    assert network_allows(p, req("GET", "/search", query={"q": ("x",), "lang": ("en",)}))
    assert network_allows(
        p, req("GET", "/search", query={"q": ("x", ""), "lang": ("en",), "page": ("2.5",)})
    )
    assert not network_allows(p, req("GET", "/search", query={"q": ("a.b",), "lang": ("en",)}))
    assert not network_allows(p, req("GET", "/search", query={"q": ("x",)}))
    assert not network_allows(p, req("GET", "/search", query={"q": ("x",), "lang": ("EN",)}))


# ---------------------------------------------------------------------------------------
# Binaries and identity


def test_identity_off_ignores_binaries_even_an_empty_list() -> None:
    p = policy(rule("n", l4(), binaries=()))
    assert network_allows(p, conn())
    assert not network_allows(p, conn(binary="/usr/bin/curl"))


@pytest.mark.parametrize(
    ("binary", "ancestor", "expected"),
    [
        ("/usr/bin/curl", "/usr/bin/curl", True),
        ("/usr/bin/wget", "/usr/bin/wget", False),
        ("/usr/bin/python3", "/usr/bin/curl", True),  # the ancestor may grant
        ("/usr/local/bin/tool", "/usr/bin/bash", True),  # glob /usr/local/**
        ("/usr/local", "/bin/sh", False),
    ],
)
def test_identity_on_needs_a_binary_glob_matching_binary_or_ancestor(
    binary: str, ancestor: str, expected: bool
) -> None:
    p = policy(rule("n", l4(), binaries=(CURL, "/usr/local/**")))
    assert network_allows(p, conn(binary=binary, ancestor=ancestor)) is expected


# ---------------------------------------------------------------------------------------
# Denies


def deny(method: str, path: str = "", index: int = 0, **query: str | None) -> HttpRule:
    return allow(method, path, index, **query)


def test_deny_in_the_same_endpoint_blocks_and_get_deny_also_blocks_head() -> None:
    endpoint = rest(allow("*", "/**"), deny=(deny("GET", "/admin/**"),))
    p = policy(rule("n", endpoint))
    assert network_allows(p, req("GET", "/public"))
    assert not network_allows(p, req("GET", "/admin/users"))
    assert not network_allows(p, req("HEAD", "/admin/users"))
    assert network_allows(p, req("POST", "/admin/users"))


def test_deny_in_one_rule_blocks_a_grant_of_another_rule() -> None:
    granting = rule("grant", l4())
    denying = rule("deny", rest(allow("GET", "/x"), deny=(deny("DELETE", "/**"),)))
    assert network_allows(policy(granting), req("DELETE", "/repo"))
    assert not network_allows(policy(granting, denying), req("DELETE", "/repo"))
    assert network_allows(policy(granting, denying), req("GET", "/repo"))
    # The L4 connection itself is never denied.
    assert network_allows(policy(granting, denying), conn())


def test_deny_applies_to_the_binaries_of_its_own_rule_including_the_ancestor() -> None:
    granting = rule("grant", l4(), binaries=("/**",))
    denying = rule(
        "deny", rest(allow("GET", "/"), deny=(deny("POST", "/**"),)), binaries=("/bin/bash",)
    )
    p = policy(granting, denying)
    assert network_allows(p, req("POST", "/x", binary="/usr/bin/curl"))
    assert not network_allows(p, req("POST", "/x", binary="/bin/bash"))
    assert not network_allows(p, req("POST", "/x", binary="/usr/bin/curl", ancestor="/bin/bash"))
    # Identity off: the deny applies to every binary.
    assert not network_allows(p, req("POST", "/x"))


def test_deny_query_fires_on_any_matching_value() -> None:
    endpoint = rest(allow("GET", "/**"), deny=(deny("GET", "/**", debug=None),))
    p = policy(rule("n", endpoint))
    assert network_allows(p, req("GET", "/x"))
    assert network_allows(p, req("GET", "/x", query={"debug": ("a.b",)}))
    assert not network_allows(p, req("GET", "/x", query={"debug": ("a.b", "1")}))


def test_deny_needs_the_deny_endpoints_connection_and_path_selector() -> None:
    granting = rule("grant", l4(ports=(443, 8443)))
    denying = rule("deny", rest(allow("GET", "/"), path="/api/**", deny=(deny("*"),)))
    p = policy(granting, denying)
    assert not network_allows(p, req("GET", "/api/x"))
    assert network_allows(p, req("GET", "/other"))
    assert network_allows(p, req("GET", "/api/x", port=8443))


# ---------------------------------------------------------------------------------------
# Destination addresses, policy-wide


def test_wildcard_default_reaches_only_public_addresses_unlike_an_exact_host() -> None:
    exact = policy(rule("n", l4()))
    wildcard = policy(rule("n", l4(host="*.example.com")))
    private = conn(ip="10.0.0.1")
    assert network_allows(exact, private)
    assert not network_allows(wildcard, private)
    assert network_allows(wildcard, conn())


def test_control_ports_are_refused_for_exact_hosts_but_not_wildcard_defaults() -> None:
    assert not network_allows(policy(rule("n", l4(ports=(6443,)))), conn(port=6443))
    wildcard = policy(rule("n", l4(host="*.example.com", ports=(6443,))))
    assert network_allows(wildcard, conn(port=6443))


def test_address_may_be_accepted_by_another_connected_entry() -> None:
    # Granted by the wildcard L4 entry; the exact REST entry on the same connection
    # accepts the private address. The reference model keeps these disjunctions apart.
    wildcard = rule("wild", l4(host="*.example.com"))
    exact = rule("exact", rest(allow("POST", "/only")))
    action = req("GET", "/x", ip="10.0.0.1")
    assert not network_allows(policy(wildcard), action)
    assert ip_ok(policy(wildcard, exact), action)
    assert network_allows(policy(wildcard, exact), action)


def test_address_entries_need_matching_binaries() -> None:
    wildcard = rule("wild", l4(host="*.example.com"), binaries=(CURL,))
    exact = rule("exact", l4(), binaries=("/usr/bin/other",))
    action = conn(ip="10.0.0.1", binary=CURL)
    assert not network_allows(policy(wildcard, exact), action)


def test_trusted_gateway_alias_reaches_link_local_only() -> None:
    p = policy(rule("gw", l4(host="host.openshell.internal")))
    gateway = "host.openshell.internal"
    assert network_allows(p, _trusted(gateway, "169.254.1.1"))
    assert not network_allows(p, _trusted(gateway, "169.254.169.254"))
    assert not network_allows(p, _trusted(gateway, "10.0.0.1"))
    assert network_allows(p, conn(host=gateway, ip="10.0.0.1"))


def _trusted(host: str, ip: str) -> NetworkAction:
    return NetworkAction(
        host=host, port=443, destination_ip=ipaddress.ip_address(ip), trusted_gateway=True
    )


# ---------------------------------------------------------------------------------------
# Explanations and malformed actions


def test_granting_and_denying_entries_name_rule_endpoint_and_rule_index() -> None:
    first = rule(
        "a",
        l4(index=0, ports=(80,)),
        rest(allow("GET", "/x", 0), allow("*", "/**", 1), index=1),
    )
    second = rule(
        "b",
        preset("read-only", index=0),
        rest(allow("GET", "/"), deny=(deny("POST", "/", 0), deny("GET", "/x", 1)), index=1),
    )
    p = policy(first, second)
    assert granting_entries(p, req("GET", "/x")) == [
        GrantEntry("a", 1, 0),
        GrantEntry("a", 1, 1),
        GrantEntry("b", 0, None),
    ]
    assert denying_entries(p, req("GET", "/x")) == [DenyEntry("b", 1, 1)]
    assert not network_allows(p, req("GET", "/x"))
    assert granting_entries(p, conn(port=80)) == [GrantEntry("a", 0, None)]
    assert denying_entries(p, conn(port=80)) == []


@pytest.mark.parametrize(
    "action",
    [
        NetworkAction(HOST, 443, ipaddress.ip_address("8.8.8.8"), protocol="rest", method="GET"),
        NetworkAction(HOST, 443, ipaddress.ip_address("8.8.8.8"), protocol="rest", path="/"),
        NetworkAction(HOST, 443, ipaddress.ip_address("8.8.8.8"), binary_identity_required=True),
    ],
)
def test_actions_missing_required_fields_are_rejected(action: NetworkAction) -> None:
    with pytest.raises(ValueError):
        network_allows(policy(rule("n", l4())), action)

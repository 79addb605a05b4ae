"""The four categories as the reachability model fires them, and its sound divergences."""

from __future__ import annotations

from typing import Any

import pytest

from prover.proposal.credentials import load_credentials
from prover.proposal.reach import run_model
from prover.proposal.registry import load_registry
from tests.prover.proposal.helpers import (
    GITHUB_CREDENTIALS,
    assess,
    categories,
    endpoint,
    lines,
    rest,
    rule,
)


def raw(rules: dict[str, dict[str, Any]], credentials: str = GITHUB_CREDENTIALS) -> list[str]:
    findings = run_model(
        {"network_policies": rules}, load_credentials(credentials), load_registry()
    )
    return [line for finding in findings for line in finding.shorthand().split("\n  ")]


@pytest.mark.parametrize(
    ("new_rule", "expected"),
    [
        (rule([endpoint("169.254.169.254", 80)], "/usr/bin/curl"), ["link_local_reach"]),
        (rule([endpoint("github.com", 443)], "/usr/bin/git"), ["l7_bypass_credentialed"]),
        (rule([endpoint("github.com", 22)], "/usr/bin/nc"), ["l7_bypass_credentialed"]),
        (rule([endpoint("api.github.com", 443)], "/usr/bin/wget"), ["credential_reach_expansion"]),
        (
            rule([rest("api.github.com", 443, "POST")], "/usr/bin/curl"),
            ["credential_reach_expansion"],
        ),
        (rule([endpoint("example.com", 443)], "/usr/bin/curl"), []),
        (rule([endpoint("example.com", 443)], "/usr/bin/git"), []),
    ],
    ids=[
        "link-local",
        "git-bypass",
        "nc-bypass",
        "l4-reach",
        "l7-write-reach",
        "no-cred",
        "no-cred-bypass",
    ],
)
def test_each_category_fires_for_its_shape_on_an_empty_policy(
    new_rule: dict[str, Any], expected: list[str]
) -> None:
    assert categories(assess(None, "r", new_rule)) == expected


def test_capability_expansion_fires_for_a_new_method_on_existing_credentialed_reach() -> None:
    current = {"gh": rule([rest("api.github.com", 443, "POST")], "/usr/bin/gh")}
    added = rule([rest("api.github.com", 443, "DELETE", "PATCH")], "/usr/bin/gh")
    assessment = assess(current, "gh", added)
    assert categories(assessment) == ["capability_expansion"]
    assert lines(assessment) == [
        "capability_expansion: DELETE on api.github.com:443 via /usr/bin/gh",
        "capability_expansion: PATCH on api.github.com:443 via /usr/bin/gh",
    ]


def test_raw_model_lists_reach_and_one_capability_path_per_sorted_method() -> None:
    found = raw({"r": rule([rest("api.github.com", 443, "PUT", "GET")], "/usr/bin/curl")})
    assert found == [
        "credential_reach_expansion: api.github.com:443 via /usr/bin/curl",
        "capability_expansion: GET on api.github.com:443 via /usr/bin/curl",
        "capability_expansion: PUT on api.github.com:443 via /usr/bin/curl",
    ]


def test_bypass_binary_yields_no_reach_or_capability_even_on_inspected_endpoint() -> None:
    assert raw({"r": rule([rest("github.com", 443, "POST")], "/usr/bin/git")}) == [
        "l7_bypass_credentialed: github.com:443 via /usr/bin/git"
    ]


def test_credentials_are_host_only_so_every_port_is_credentialed() -> None:
    assert raw({"r": rule([endpoint("api.github.com", 8443)], "/usr/bin/curl")}) == [
        "credential_reach_expansion: api.github.com:8443 via /usr/bin/curl"
    ]


def test_rule_without_binaries_contributes_no_paths() -> None:
    assert raw({"r": rule([endpoint("169.254.169.254", 80)])}) == []


def test_binary_only_reaches_endpoints_of_its_own_rule() -> None:
    rules = {
        "a": rule([endpoint("example.com", 443)], "/usr/bin/curl"),
        "b": rule([endpoint("api.github.com", 443)], "/usr/bin/wget"),
    }
    assert raw(rules) == ["credential_reach_expansion: api.github.com:443 via /usr/bin/wget"]


def test_paths_are_ordered_by_binary_first_seen_then_endpoint() -> None:
    rules = {
        "b": rule([endpoint("github.com", 443)], "/usr/bin/wget"),
        "a": rule([endpoint("api.github.com", 443)], "/usr/bin/curl"),
    }
    assert raw(rules) == [
        "credential_reach_expansion: api.github.com:443 via /usr/bin/curl",
        "credential_reach_expansion: github.com:443 via /usr/bin/wget",
    ]


def test_binary_registry_entry_without_exfiltration_is_skipped() -> None:
    registry = load_registry(
        "binary: /usr/bin/quiet\ncan_exfiltrate: false\ncan_construct_http: true"
    )
    findings = run_model(
        {"network_policies": {"r": rule([endpoint("169.254.169.254", 80)], "/usr/bin/quiet")}},
        load_credentials(GITHUB_CREDENTIALS),
        registry,
    )
    assert findings == ()


# --- divergences from the reference, each adding risk the reference would miss -----------


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",
        "fe80::1",
        "::ffff:169.254.169.254",
        "METADATA.google.internal.",
        "*.google.internal",
    ],
)
def test_link_local_and_metadata_hosts_are_flagged_even_behind_read_only_rules(host: str) -> None:
    found = raw({"r": rule([rest(host, 80, access="read-only")], "/usr/bin/curl")}, "[]")
    assert found == [f"link_local_reach: {host}:80 via /usr/bin/curl"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "169.254.169.254.example.com"])
def test_loopback_and_lookalike_hosts_are_not_link_local(host: str) -> None:
    assert raw({"r": rule([endpoint(host, 80)], "/usr/bin/curl")}, "[]") == []


def test_audit_mode_read_only_endpoint_counts_as_uninspected_reach() -> None:
    audit = {"host": "api.github.com", "port": 443, "protocol": "rest", "access": "read-only"}
    assert raw({"r": rule([audit], "/usr/bin/curl")}) == [
        "credential_reach_expansion: api.github.com:443 via /usr/bin/curl"
    ]


@pytest.mark.parametrize(
    ("fields", "writes"),
    [
        ({"protocol": "graphql", "rules": [{"allow": {"operation_type": "query"}}]}, False),
        ({"protocol": "graphql", "rules": [{"allow": {"operation_type": "mutation"}}]}, True),
        ({"protocol": "mcp", "rules": [{"allow": {"method": "tools/list"}}]}, False),
        ({"protocol": "mcp", "rules": [{"allow": {"method": "tools/call"}}]}, True),
        ({"protocol": "json-rpc", "rules": [{"allow": {"method": "reports.list"}}]}, True),
        ({"protocol": "websocket", "rules": [{"allow": {"method": "GET", "path": "/ws"}}]}, False),
        (
            {
                "protocol": "websocket",
                "rules": [{"allow": {"method": "WEBSOCKET_TEXT", "path": "/ws"}}],
            },
            True,
        ),
        ({"protocol": "sql", "enforcement": "audit", "access": "read-only"}, True),
    ],
    ids=[
        "gql-query",
        "gql-mutation",
        "mcp-list",
        "mcp-call",
        "jsonrpc",
        "ws-get",
        "ws-text",
        "sql",
    ],
)
def test_non_rest_write_operations_give_credentialed_reach(
    fields: dict[str, Any], writes: bool
) -> None:
    ep = {"host": "api.github.com", "port": 443, "enforcement": "enforce", **fields}
    found = raw({"r": rule([ep], "/usr/bin/curl")})
    reach = "credential_reach_expansion: api.github.com:443 via /usr/bin/curl"
    assert (reach in found) is writes


def test_graphql_rules_are_labelled_by_operation_type_for_capability_paths() -> None:
    ep = {
        "host": "api.github.com",
        "port": 443,
        "protocol": "graphql",
        "enforcement": "enforce",
        "rules": [
            {"allow": {"operation_type": "mutation"}},
            {"allow": {"operation_type": "query"}},
        ],
    }
    found = raw({"r": rule([ep], "/usr/bin/curl")})
    assert found[1:] == [
        "capability_expansion: MUTATION on api.github.com:443 via /usr/bin/curl",
        "capability_expansion: QUERY on api.github.com:443 via /usr/bin/curl",
    ]


def test_endpoints_sharing_rule_host_and_port_union_their_facts_and_report_once() -> None:
    read_only = rest("api.github.com", 443, access="read-only")
    writer = {**rest("api.github.com", 443, "DELETE"), "path": "/admin/**"}
    found = raw({"r": rule([read_only, writer], "/usr/bin/curl")})
    assert found == [
        "credential_reach_expansion: api.github.com:443 via /usr/bin/curl",
        *(
            f"capability_expansion: {m} on api.github.com:443 via /usr/bin/curl"
            for m in ("DELETE", "GET", "HEAD", "OPTIONS")
        ),
    ]


def test_path_scoped_sibling_adding_delete_is_a_capability_expansion() -> None:
    current = {"gh": rule([rest("api.github.com", 443, access="read-write")], "/usr/bin/gh")}
    sibling = {**rest("api.github.com", 443, "DELETE"), "path": "/repos/**"}
    assessment = assess(
        current,
        "gh",
        rule([rest("api.github.com", 443, access="read-write"), sibling], "/usr/bin/gh"),
    )
    assert lines(assessment) == [
        "capability_expansion: DELETE on api.github.com:443 via /usr/bin/gh"
    ]


def test_binary_glob_covering_a_bypass_binary_bypasses_l7() -> None:
    assert raw({"r": rule([rest("github.com", 443, access="read-only")], "/usr/bin/*")}) == [
        "l7_bypass_credentialed: github.com:443 via /usr/bin/*"
    ]


def test_wildcard_credential_target_overlapping_a_wildcard_host_is_credentialed() -> None:
    credentials = '[{name: c, type: t, target_hosts: ["api.*.com"]}]'
    assert raw({"r": rule([endpoint("*.github.com", 443)], "/usr/bin/curl")}, credentials) == [
        "credential_reach_expansion: *.github.com:443 via /usr/bin/curl"
    ]

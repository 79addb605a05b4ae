"""Fixes narrow before they delete, and every fix offered is proved."""

from __future__ import annotations

from typing import Any

import pytest

from prover.api import check_boundary
from prover.explain import explain
from prover.explain.document import read_data
from tests.prover.explain.pairs import rest_pair

HOST = "api.example.com"


def rest(**fields: Any) -> dict[str, Any]:
    """An enforced REST endpoint on api.example.com:443."""
    return {"host": HOST, "port": 443, "protocol": "rest", "enforcement": "enforce", **fields}


def allow(method: str, path: str, **query: str) -> dict[str, Any]:
    matcher: dict[str, Any] = {"method": method, "path": path}
    if query:
        matcher["query"] = query
    return {"allow": matcher}


#: (id, candidate endpoint, boundary endpoint, the fixed candidate's endpoint)
NARROWINGS: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "l4-becomes-enforced-rest-with-the-boundarys-rules",
        {"host": HOST, "port": 443},
        rest(rules=[allow("GET", "/v1/**")]),
        rest(rules=[allow("GET", "/v1/**")]),
    ),
    (
        "port-list-becomes-the-covered-ports",
        {"host": HOST, "ports": [443, 8443]},
        {"host": HOST, "ports": [443]},
        {"host": HOST, "ports": [443]},
    ),
    (
        "any-method-becomes-the-boundarys-method",
        rest(rules=[allow("*", "/v1/**")]),
        rest(rules=[allow("GET", "/v1/**")]),
        rest(rules=[allow("GET", "/v1/**")]),
    ),
    (
        "any-path-becomes-the-boundarys-path",
        rest(rules=[allow("GET", "/**")]),
        rest(rules=[allow("GET", "/v1/**")]),
        rest(rules=[allow("GET", "/v1/**")]),
    ),
    (
        "missing-query-key-is-added",
        rest(rules=[allow("GET", "/refs")]),
        rest(rules=[allow("GET", "/refs", service="upload")]),
        rest(rules=[allow("GET", "/refs", service="upload")]),
    ),
    (
        "access-full-becomes-explicit-rules",
        rest(access="full"),
        rest(rules=[allow("GET", "/a/**"), allow("POST", "/b")]),
        rest(rules=[allow("GET", "/a/**"), allow("POST", "/b")]),
    ),
    (
        "read-write-preset-becomes-read-only",
        rest(access="read-write"),
        rest(access="read-only"),
        rest(access="read-only"),
    ),
    (
        "allowed-ips-become-the-boundarys",
        {"host": HOST, "ports": [443], "allowed_ips": ["10.0.0.0/8"]},
        {"host": HOST, "ports": [443], "allowed_ips": ["10.2.0.0/16"]},
        {"host": HOST, "ports": [443], "allowed_ips": ["10.2.0.0/16"]},
    ),
    (
        "wildcard-host-becomes-the-boundarys-host",
        {"host": "*.example.com", "ports": [443], "allowed_ips": ["8.8.8.0/24"]},
        {"host": HOST, "ports": [443], "allowed_ips": ["8.8.8.0/24"]},
        {"host": HOST, "ports": [443], "allowed_ips": ["8.8.8.0/24"]},
    ),
    (
        "the-boundarys-deny-rule-is-copied",
        rest(rules=[allow("GET", "/**")]),
        rest(rules=[allow("GET", "/**")], deny_rules=[{"method": "GET", "path": "/admin/**"}]),
        rest(rules=[allow("GET", "/**")], deny_rules=[{"method": "GET", "path": "/admin/**"}]),
    ),
]


@pytest.mark.parametrize(
    ("candidate_endpoint", "boundary_endpoint", "expected"),
    [pytest.param(c, b, e, id=i) for i, c, b, e in NARROWINGS],
)
def test_a_violation_is_fixed_by_narrowing_into_the_boundary_entry(
    candidate_endpoint: dict[str, Any], boundary_endpoint: dict[str, Any], expected: dict[str, Any]
) -> None:
    candidate, boundary = rest_pair(candidate_endpoint, boundary_endpoint)

    explanation = explain(candidate, boundary)

    assert explanation.fix_verified, explanation.explanation
    assert {v.fix_kind for v in explanation.violations} == {"narrow"}
    assert explanation.fixed_candidate is not None
    fixed = read_data(explanation.fixed_candidate)
    assert fixed["network_policies"]["n"]["endpoints"] == [expected]
    kept = explanation.grants_kept
    assert kept is not None and kept.with_fix > kept.with_rule_deleted  # type: ignore[operator]


def test_a_wildcard_host_is_split_into_the_boundarys_hosts() -> None:
    candidate = """\
version: 1
network_policies:
  n:
    endpoints: [{ host: '*.example.com', ports: [443], allowed_ips: [8.8.8.0/24] }]
    binaries: [{ path: /usr/bin/curl }]
"""
    boundary = """\
version: 1
network_policies:
  n:
    endpoints:
      - { host: api.example.com, ports: [443], allowed_ips: [8.8.8.0/24] }
      - { host: www.example.com, ports: [443], allowed_ips: [8.8.8.0/24] }
    binaries: [{ path: /usr/bin/curl }]
"""
    explanation = explain(candidate, boundary)

    assert explanation.fix_verified
    assert explanation.fixed_candidate is not None
    hosts = [
        e["host"]
        for e in read_data(explanation.fixed_candidate)["network_policies"]["n"]["endpoints"]
    ]
    assert hosts == ["api.example.com", "www.example.com"]


def test_a_wildcard_is_narrowed_to_the_boundarys_exact_host_and_says_how_it_was_proved() -> None:
    # An exact host may reach private addresses that the wildcard cannot: the fix is the
    # boundary's host, proved within the boundary and within the original candidate plus
    # that exact host, and every summary says so.
    candidate, boundary = rest_pair(
        {"host": "*.example.com", "port": 443}, {"host": HOST, "port": 443}
    )

    explanation = explain(candidate, boundary)

    violation = explanation.violations[0]
    assert violation.fix_kind == "narrow"
    assert [(op.op, op.new) for op in violation.fix] == [("replace", HOST)]
    assert explanation.fix_verified
    verification = explanation.verification
    assert verification is not None
    assert verification.compared_with.startswith("the original candidate with exact host")
    assert verification.narrows_candidate.note is not None
    assert "private" in verification.narrows_candidate.note
    assert verification.compared_with in explanation.summary
    assert explanation.grants_kept is not None
    kept = explanation.grants_kept
    assert kept.with_rule_deleted is not None and kept.with_fix > kept.with_rule_deleted


def test_a_binary_glob_narrowed_to_exact_binaries_is_rejected_as_unprovable() -> None:
    endpoint = {"host": HOST, "port": 443}
    candidate, boundary = rest_pair(endpoint, endpoint, binary="/usr/bin/*")

    explanation = explain(candidate, boundary)

    violation = explanation.violations[0]
    assert violation.counterexample["binary_identity_required"] is True
    assert [m.dimension for m in violation.closest_boundary_rules[0].fails_on] == ["binary"]
    assert any("symlink" in r.reason for r in violation.rejected_fixes)
    assert explanation.fix_verified  # the fallback that does verify is offered


@pytest.mark.parametrize(
    ("candidate", "boundary", "path", "expected"),
    [
        pytest.param(
            "version: 1\nlandlock: {compatibility: best_effort}\n",
            "version: 1\nlandlock: {compatibility: hard_requirement}\n",
            ("landlock", "compatibility"),
            "hard_requirement",
            id="landlock-becomes-a-hard-requirement",
        ),
        pytest.param(
            "version: 1\nlandlock: {}\n",
            "version: 1\nlandlock: {compatibility: hard_requirement}\n",
            ("landlock", "compatibility"),
            "hard_requirement",
            id="an-absent-landlock-setting-is-added",
        ),
        pytest.param(
            "version: 1\nfilesystem_policy: {read_write: [/data]}\n",
            "version: 1\nfilesystem_policy: {read_only: [/data]}\n",
            ("filesystem_policy", "read_only"),
            ["/data"],
            id="read-write-path-becomes-read-only",
        ),
    ],
)
def test_settings_and_paths_are_narrowed_to_the_boundarys(
    candidate: str, boundary: str, path: tuple[str, str], expected: object
) -> None:
    explanation = explain(candidate, boundary)

    assert explanation.fix_verified
    assert explanation.fixed_candidate is not None
    fixed = read_data(explanation.fixed_candidate)
    assert fixed[path[0]][path[1]] == expected
    assert (
        check_boundary(explanation.fixed_candidate, boundary).outcome.verdict == "within_boundary"
    )


def test_root_becomes_the_boundarys_user_under_the_reference_semantics() -> None:
    """By default root is an error (the runtime refuses it: validate_sandbox_policy);
    the reference semantics still exceed and fix it."""
    candidate = "version: 1\nprocess: {run_as_user: root, run_as_group: sandbox}\n"
    boundary = "version: 1\nprocess: {run_as_user: sandbox, run_as_group: sandbox}\n"
    assert explain(candidate, boundary).result.result == "error"
    explanation = explain(candidate, boundary, reference_semantics=True)
    assert explanation.fix_verified and explanation.fixed_candidate is not None
    assert read_data(explanation.fixed_candidate)["process"]["run_as_user"] == "sandbox"

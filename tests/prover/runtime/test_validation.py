"""Candidate validation: the gateway's semantic checks, reported as application errors."""

from __future__ import annotations

from typing import Any

import pytest

from prover.runtime.validation import policy_violations
from tests.prover.proposal.helpers import assess, endpoint, rest, rule


def violations(*endpoints: dict[str, Any], name: str = "r") -> list[str]:
    return policy_violations({"network_policies": {name: rule(list(endpoints), "/c")}})


@pytest.mark.parametrize(
    ("ep", "fragment"),
    [
        ({"host": "*.com", "port": 443}, "TLD wildcard '*.com' is not allowed"),
        ({"host": "*.s3.us-*.amazonaws.com", "port": 443}, "invalid host wildcard"),
        (
            {"host": "api.example.com", "port": 443, "protocol": "rest"},
            "protocol requires rules or access",
        ),
        (
            {
                "host": "a.com",
                "port": 443,
                "protocol": "rest",
                "access": "full",
                "rules": [{"allow": {"method": "GET", "path": "/"}}],
            },
            "rules and access are mutually exclusive",
        ),
        (
            {"host": "a.com", "port": 443, "deny_rules": [{"method": "POST", "path": "/x"}]},
            "deny_rules require protocol",
        ),
        (
            {"host": "10.0.0.5", "port": 5432, "protocol": "tcp"},
            "must use a DNS hostname, not an IP literal",
        ),
        (
            {"host": "db.example.com", "port": 5432, "protocol": "tcp", "enforcement": "enforce"},
            "protocol tcp does not support L7-only fields: enforcement",
        ),
        (
            {"host": "mcp.example.com", "port": 443, "protocol": "mcp", "access": "full"},
            "protocol mcp does not support access presets",
        ),
        (
            {
                "host": "db.example.com",
                "port": 5432,
                "protocol": "sql",
                "enforcement": "enforce",
                "access": "full",
            },
            "SQL enforcement requires full SQL parsing",
        ),
        ({"host": "a.com", "port": 0}, "endpoint 'a.com' must declare at least one port"),
        ({"host": "", "port": 443}, "endpoint host must not be empty unless allowed_ips"),
        ({"host": "a.com", "port": 443, "protocol": "ftp"}, "unknown protocol 'ftp'"),
        (
            {"host": "a.com", "port": 443, "credential_signing": "sigv4"},
            "credential_signing set but signing_service is empty",
        ),
    ],
)
def test_invalid_endpoint_shapes_are_violations(ep: dict[str, Any], fragment: str) -> None:
    found = violations(ep)
    assert any(fragment in v for v in found), found


def test_valid_endpoints_have_no_violations() -> None:
    assert violations(rest("api.github.com", 443, "GET"), endpoint("pypi.org", 443)) == []


def test_l7_violation_names_rule_and_endpoint_index() -> None:
    found = violations(
        endpoint("a.com"), {"host": "b.com", "port": 443, "protocol": "rest"}, name="gh"
    )
    assert found == [
        "network policy 'gh': endpoint 1 has invalid L7 configuration: protocol requires rules "
        "or access to define allowed traffic"
    ]


def test_invalid_candidate_is_an_application_error() -> None:
    assessment = assess(None, "r", rule([{"host": "*.com", "port": 443}], "/usr/bin/curl"))
    assert assessment.application_error == (
        "candidate invalid: policy contains unsafe content: network policy 'r': TLD wildcard "
        "'*.com' is not allowed; use subdomain wildcards like '*.example.com' instead"
    )
    assert assessment.validation_result == "" and assessment.findings == []


def test_conflicting_overlapping_endpoints_are_an_ambiguity_error() -> None:
    current = {
        "_provider_gh": rule([rest("api.github.com", 443, access="read-only")], "/usr/bin/gh")
    }
    audit = {"host": "api.github.com", "port": 443, "protocol": "rest", "access": "read-only"}
    assessment = assess(current, "b", rule([audit], "/usr/bin/curl"))
    assert assessment.application_error == (
        "candidate invalid: network endpoint ambiguity validation failed:; network policies "
        "'_provider_gh' endpoint[0] (api.github.com:443) and 'b' endpoint[0] (api.github.com:443) "
        'overlap on port(s) 443 with conflicting metadata: enforcement="enforce" vs "audit"'
    )


def test_endpoints_with_different_path_specificity_are_not_ambiguous() -> None:
    current = {"a": rule([rest("api.github.com", 443, access="read-only")], "/usr/bin/gh")}
    graphql = {
        "host": "api.github.com",
        "port": 443,
        "path": "/graphql",
        "protocol": "graphql",
        "enforcement": "audit",
        "access": "read-only",
    }
    assert assess(current, "b", rule([graphql], "/usr/bin/gh")).application_error is None


def test_always_blocked_allowed_ips_pass_validation_but_block_approval() -> None:
    ep = {**endpoint("api.example.com"), "allowed_ips": ["169.254.0.0/16"]}
    assessment = assess(None, "r", rule([ep], "/usr/bin/curl"))
    assert assessment.application_error is None
    assert assessment.approval_blockers == [
        "proposed rule contains always-blocked `allowed_ips` entry '169.254.0.0/16'; SSRF "
        "hardening prevents traffic to these destinations regardless of policy"
    ]
    assert assessment.needs_review and not assessment.auto_approvable


def test_wildcard_host_overlapping_a_concrete_host_is_checked_for_ambiguity() -> None:
    current = {"_provider_gh": rule([endpoint("api.github.com")], "/usr/bin/gh")}
    skip = {**endpoint("*.github.com"), "tls": "skip"}
    assessment = assess(current, "wild", rule([skip], "/usr/bin/curl"))
    assert assessment.application_error is not None
    assert 'tls="auto" vs "skip"' in assessment.application_error


def test_disjoint_ports_are_never_ambiguous() -> None:
    current = {"_provider_gh": rule([endpoint("api.github.com", 443)], "/usr/bin/gh")}
    skip = {**endpoint("api.github.com", 8443), "tls": "skip"}
    assert assess(current, "other", rule([skip], "/usr/bin/curl")).application_error is None

"""Issue 25: explanations and fixes read REST matchers as OpenShell's engine does."""

from __future__ import annotations

from prover.explain.core import explain
from prover.explain.intersect import authored_matcher
from prover.policy.model import HttpRule


def policy(*rules: str) -> str:
    body = "".join(f"          - allow: {rule}\n" for rule in rules)
    return (
        "version: 1\nnetwork_policies:\n  r:\n    name: r\n    endpoints:\n"
        "      - host: api.example.com\n        port: 443\n        protocol: rest\n"
        f"        enforcement: enforce\n        rules:\n{body}"
        "    binaries:\n      - path: /usr/bin/curl\n"
    )


def test_a_boundary_rule_without_path_is_never_the_closest_nor_a_fix() -> None:
    candidate = policy("{method: GET, path: /x}", "{method: GET, path: /y}")
    boundary = policy("{method: GET}", "{method: GET, path: /y}")
    result = explain(candidate, boundary)
    assert result.result.result == "exceeds_boundary"
    (violation,) = result.violations
    assert "nearest allow rule GET /y" in result.explanation
    assert [op.path for op in result.fix] == ["network_policies.r.endpoints[0].rules[0]"]
    assert violation.granted_by[0].allow_rule_index == 0


def test_an_authored_fix_rule_always_names_a_path() -> None:
    # opa.rs sends a path-less allow rule as path "", which allows nothing.
    for path in ("", "**"):
        assert authored_matcher(HttpRule(method="GET", path=path))["path"] == "/**"
    assert authored_matcher(HttpRule(method="GET", path="/a/*"))["path"] == "/a/*"

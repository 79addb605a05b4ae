"""Builders for small policies and proposals used by the proposal-check tests."""

from __future__ import annotations

import json
from typing import Any

import yaml

from prover.proposal import ProposalAssessment, assess_proposal

GITHUB_CREDENTIALS = json.dumps(
    [{"name": "github-pat", "type": "github", "target_hosts": ["api.github.com", "github.com"]}]
)


def endpoint(host: str, port: int = 443, **fields: Any) -> dict[str, Any]:
    return {"host": host, "port": port, **fields}


def rest(host: str, port: int = 443, *methods: str, access: str | None = None) -> dict[str, Any]:
    """An enforced REST endpoint with an access preset or one allow rule per method."""
    found: dict[str, Any] = {
        "host": host,
        "port": port,
        "protocol": "rest",
        "enforcement": "enforce",
    }
    if access is not None:
        found["access"] = access
    else:
        found["rules"] = [{"allow": {"method": m, "path": "/**"}} for m in methods]
    return found


def rule(
    endpoints: list[dict[str, Any]], *binaries: str, name: str | None = None
) -> dict[str, Any]:
    found: dict[str, Any] = {"endpoints": endpoints, "binaries": [{"path": b} for b in binaries]}
    if name is not None:
        found["name"] = name
    return found


def policy(rules: dict[str, dict[str, Any]] | None = None) -> str:
    document: dict[str, Any] = {"version": 1}
    if rules:
        document["network_policies"] = rules
    return yaml.safe_dump(document, sort_keys=False)


def chunk(rule_name: str, new_rule: dict[str, Any]) -> str:
    return json.dumps({"rule_name": rule_name, "rule": new_rule})


def assess(
    current: dict[str, dict[str, Any]] | None,
    rule_name: str,
    new_rule: dict[str, Any],
    *,
    credentials: str | None = GITHUB_CREDENTIALS,
    **options: Any,
) -> ProposalAssessment:
    return assess_proposal(
        policy(current), chunk(rule_name, new_rule), credentials=credentials, **options
    )


def categories(assessment: ProposalAssessment) -> list[str]:
    return [finding.category.value for finding in assessment.findings]


def lines(assessment: ProposalAssessment) -> list[str]:
    return assessment.validation_result.split("\n  ")[1:]

"""Reading the proposal: the agent API body and the bare gateway chunk."""

from __future__ import annotations

import json
from typing import Any

import pytest

from prover.errors import ProposalError
from prover.proposal.body import parse_proposal


def agent(rule: dict[str, Any], rule_name: str | None = "r", **extra: Any) -> str:
    add: dict[str, Any] = {"rule": rule}
    if rule_name is not None:
        add["ruleName"] = rule_name
    return json.dumps({"intent_summary": "why", "operations": [{"addRule": add}], **extra})


GH = {"endpoints": [{"host": "api.github.com", "port": 443}], "binaries": [{"path": "/usr/bin/gh"}]}


def test_agent_body_is_read_with_its_intent_and_rule_name() -> None:
    proposed = parse_proposal(agent(GH))
    assert (proposed.rule_name, proposed.intent_summary, proposed.source) == (
        "r",
        "why",
        "agent_api",
    )
    assert proposed.rule == {**GH, "name": "r"}


def test_agent_body_takes_the_rule_name_from_rule_name_field_when_rule_name_is_missing() -> None:
    assert (
        parse_proposal(agent({**GH, "name": "from_rule"}, rule_name=None)).rule_name == "from_rule"
    )


def test_agent_body_drops_fields_the_agent_api_does_not_forward() -> None:
    endpoint = {
        "host": "api.github.com",
        "port": 443,
        "protocol": "rest",
        "enforcement": "enforce",
        "path": "/**",
        "allow_uninspected_credentials": True,
        "rules": [{"allow": {"method": "GET", "path": "/x", "query": {"a": "b"}}}],
    }
    proposed = parse_proposal(agent({**GH, "endpoints": [endpoint]}))
    assert proposed.rule["endpoints"] == [
        {
            "host": "api.github.com",
            "port": 443,
            "protocol": "rest",
            "enforcement": "enforce",
            "rules": [{"allow": {"method": "GET", "path": "/x"}}],
        }
    ]
    dropped = sorted(w.split(" is not forwarded")[0] for w in proposed.warnings)
    assert dropped == [
        "rule.endpoints[0].allow_uninspected_credentials",
        "rule.endpoints[0].path",
        "rule.endpoints[0].rules[0].allow.query",
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"operations": []}, "proposal requires at least one operation"),
        ({"operations": [{"removeRule": {}}]}, "this MVP accepts `addRule` operations"),
        (
            {"operations": [{"addRule": {"rule": GH}}, {"addRule": {"rule": GH}}]},
            "assess one addRule operation at a time",
        ),
        ({"operations": [{"addRule": {"rule": GH}}]}, "addRule.ruleName or rule.name is required"),
        (
            {"operations": [{"addRule": {"ruleName": "r", "rule": {"binaries": []}}}]},
            "rule.endpoints must contain at least one endpoint",
        ),
        (
            {
                "operations": [
                    {"addRule": {"ruleName": "r", "rule": {"endpoints": [{"port": 443}]}}}
                ]
            },
            "endpoint.host is required",
        ),
        (
            {
                "operations": [
                    {"addRule": {"ruleName": "r", "rule": {"endpoints": [{"host": "a.com"}]}}}
                ]
            },
            "endpoint.port or endpoint.ports is required",
        ),
        (
            {
                "operations": [
                    {
                        "addRule": {
                            "ruleName": "r",
                            "rule": {
                                "endpoints": [
                                    {
                                        "host": "a.com",
                                        "port": 1,
                                        "protocol": "rest",
                                        "rules": [{"allow": {"method": "GET", "path": "/x?y=1"}}],
                                    }
                                ]
                            },
                        }
                    }
                ]
            },
            "L7 allow paths must not include query strings",
        ),
        (
            {
                "operations": [
                    {
                        "addRule": {
                            "ruleName": "r",
                            "rule": {"endpoints": [{"host": "a.com", "port": 1, "hots": "x"}]},
                        }
                    }
                ]
            },
            "unknown field 'operations[0].addRule.rule.endpoints[0].hots'",
        ),
        (
            {"operations": [{"addRule": {"ruleName": "_provider_x", "rule": GH}}]},
            "uses reserved '_provider_' rule-name prefix",
        ),
    ],
)
def test_agent_body_checks_reject_bad_input(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ProposalError, match=r"^proposal") as raised:
        parse_proposal(json.dumps(body))
    assert message in str(raised.value)


def test_chunk_accepts_the_rule_as_a_mapping_or_as_yaml_text() -> None:
    as_text = parse_proposal(
        json.dumps({"rule_name": "r", "rule": "endpoints:\n  - {host: a.com, port: 443}\n"})
    )
    as_map = parse_proposal("rule_name: r\nrule:\n  endpoints:\n    - {host: a.com, port: 443}\n")
    assert as_text.rule == as_map.rule == {"endpoints": [{"host": "a.com", "port": 443}]}
    assert as_text.source == "chunk" and as_text.warnings == []


def test_chunk_keeps_every_field_including_credential_opt_in() -> None:
    rule = {"endpoints": [{"host": "a.com", "port": 443, "allow_uninspected_credentials": True}]}
    assert parse_proposal(json.dumps({"rule_name": "r", "rule": rule})).rule == rule


def test_explicit_empty_rule_lists_read_as_absent_as_on_the_gateway_path() -> None:
    endpoint = {"host": "a.com", "port": 443, "protocol": "rest", "access": "full"}
    rule = {"endpoints": [{**endpoint, "rules": [], "deny_rules": []}]}
    assert parse_proposal(json.dumps({"rule_name": "r", "rule": rule})).rule == {
        "endpoints": [endpoint]
    }


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"rule_name": "", "rule": GH}, "chunk missing rule_name"),
        ({"rule": GH}, "chunk missing rule_name"),
        (
            {"rule_name": "_provider_gh", "rule": GH},
            "chunk '_provider_gh' uses reserved '_provider_' rule-name prefix",
        ),
        ({"rule_name": "r"}, "is missing proposed_rule"),
        ({"rule_name": "r", "rule": GH, "extra": 1}, "unknown field 'extra'"),
        (
            {"rule_name": "r", "rule": {"endpoints": [{"host": "a.com", "port": 70000}]}},
            "rule.endpoints[0].port",
        ),
        ({"rule_name": "r", "rule": [1]}, "must be a mapping"),
        ({"something": 1}, "expected an agent API body"),
    ],
)
def test_chunk_checks_reject_bad_input(document: dict[str, Any], message: str) -> None:
    with pytest.raises(ProposalError) as raised:
        parse_proposal(json.dumps(document))
    assert message in str(raised.value)


@pytest.mark.parametrize("text", ["{", "[1, 2]", "a: [", b"\xff\xfe"])
def test_unreadable_proposal_text_is_invalid_input(text: str | bytes) -> None:
    with pytest.raises(ProposalError, match=r"^proposal"):
        parse_proposal(text)

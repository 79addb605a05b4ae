"""The AddRule merge: targets, folding, binaries, inheritance conflicts and errors."""

from __future__ import annotations

from typing import Any

import pytest

from prover.proposal.merge import InheritanceConflict, MergeError, add_rule
from tests.prover.proposal.helpers import assess, endpoint, rest, rule


def merged(
    rules: dict[str, Any], name: str, new_rule: dict[str, Any]
) -> tuple[dict[str, Any], str, list[str]]:
    working = {key: dict(value) for key, value in rules.items()}
    target, warnings = add_rule(working, name, new_rule)
    return working, target, warnings


def test_new_name_without_overlap_is_inserted_under_its_key() -> None:
    rules, target, _ = merged(
        {"a": rule([endpoint("a.com")], "/x")}, "b", rule([endpoint("b.com")], "/x")
    )
    assert target == "b" and list(rules) == ["a", "b"] and rules["b"]["name"] == "b"


def test_overlapping_rule_is_chosen_by_sorted_key_and_provider_rules_are_skipped() -> None:
    current = {
        "_provider_gh": rule([endpoint("api.github.com")], "/usr/bin/gh"),
        "zeta": rule([endpoint("api.github.com")], "/usr/bin/gh"),
        "alpha": rule([endpoint("api.github.com")], "/usr/bin/gh"),
    }
    _, target, _ = merged(current, "new", rule([endpoint("api.github.com")], "/usr/bin/gh"))
    assert target == "alpha"


def test_different_path_selector_does_not_overlap() -> None:
    current = {"a": rule([{**endpoint("api.github.com"), "path": "/graphql"}], "/usr/bin/gh")}
    _, target, _ = merged(current, "b", rule([endpoint("api.github.com")], "/usr/bin/gh"))
    assert target == "b"


def test_fold_expands_the_access_preset_and_appends_rules() -> None:
    current = {"a": rule([rest("h.com", 443, access="read-only")], "/c")}
    rules, _, warnings = merged(current, "a", rule([rest("h.com", 443, "PUT")], "/c"))
    endpoint_after = rules["a"]["endpoints"][0]
    assert "access" not in endpoint_after
    assert [r["allow"]["method"] for r in endpoint_after["rules"]] == [
        "GET",
        "HEAD",
        "OPTIONS",
        "PUT",
    ]
    assert endpoint_after["rules"][0]["allow"]["path"] == "**"
    assert warnings == [
        "expanded access preset 'read-only' to explicit rules for endpoint h.com:443"
    ]


def test_incoming_access_is_ignored_when_rules_exist_and_existing_protocol_is_kept() -> None:
    current = {"a": rule([rest("h.com", 443, "GET")], "/c")}
    incoming = {"host": "h.com", "port": 443, "protocol": "websocket", "access": "full"}
    rules, _, warnings = merged(current, "a", rule([incoming], "/c"))
    assert rules["a"]["endpoints"][0]["protocol"] == "rest"
    assert warnings == [
        "endpoint h.com:443 keeps existing protocol 'rest' and ignores incoming 'websocket'",
        "endpoint h.com:443 already uses explicit rules; incoming access preset 'full' was ignored",
    ]


def test_ports_are_unioned_and_flags_or_ed() -> None:
    current = {"a": rule([endpoint("h.com", 443)], "/c")}
    incoming = {"host": "h.com", "ports": [8443, 443], "allow_uninspected_credentials": True}
    rules, _, _ = merged(current, "a", rule([incoming], "/c"))
    assert rules["a"]["endpoints"] == [
        {"host": "h.com", "ports": [443, 8443], "allow_uninspected_credentials": True}
    ]


def test_new_binary_is_appended_when_it_declares_every_endpoint() -> None:
    current = {"a": rule([endpoint("h.com")], "/c")}
    rules, _, _ = merged(current, "a", rule([endpoint("h.com")], "/d"))
    assert rules["a"]["binaries"] == [{"path": "/c"}, {"path": "/d"}]


def test_any_binary_rule_keeps_its_scope_with_a_warning() -> None:
    current = {"a": rule([endpoint("h.com")])}
    rules, _, warnings = merged(current, "a", rule([endpoint("h.com")], "/d"))
    assert "binaries" not in rules["a"] or rules["a"]["binaries"] == []
    assert warnings == [
        "rule 'a' already authorizes any binary; kept that scope instead of narrowing it to /d"
    ]


def test_incoming_any_binary_widens_a_declared_rule() -> None:
    current = {"a": rule([endpoint("h.com")], "/c")}
    rules, _, _ = merged(current, "a", rule([endpoint("h.com")]))
    assert not rules["a"].get("binaries")


@pytest.mark.parametrize(
    ("existing", "incoming", "message"),
    [
        (
            rule([endpoint("h.com"), endpoint("other.com")], "/c"),
            rule([endpoint("h.com")], "/d"),
            "merge operation 0 add-rule 'a' would grant binary '/d' undeclared authorization "
            "for other.com on ports [443]",
        ),
        (
            rule(
                [
                    {
                        "host": "h.com",
                        "ports": [443, 8443],
                        "protocol": "rest",
                        "enforcement": "enforce",
                        "access": "read-only",
                    }
                ],
                "/c",
            ),
            rule([rest("h.com", 443, "PUT")], "/c"),
            "merge operation 0 add-rule 'a' would change authorization for h.com on undeclared "
            "ports [8443]; declare every port of the endpoint it modifies",
        ),
        (
            rule([rest("h.com", 443, access="read-only")], "/c", "/e"),
            rule([rest("h.com", 443, "PUT")], "/c"),
            "merge operation 0 add-rule 'a' would grant existing binaries new or changed "
            "authorization for h.com on ports [443]; also declare /e",
        ),
    ],
    ids=["new-binary", "undeclared-port", "existing-binaries"],
)
def test_explicitly_named_target_reports_inheritance_conflicts(
    existing: dict[str, Any], incoming: dict[str, Any], message: str
) -> None:
    with pytest.raises(InheritanceConflict) as raised:
        merged({"a": existing}, "a", incoming)
    assert str(raised.value) == message


def test_fallback_target_keeps_the_proposal_on_its_own_key_on_conflict() -> None:
    current = {"a": rule([endpoint("h.com"), endpoint("other.com")], "/c")}
    rules, target, warnings = merged(current, "b", rule([endpoint("h.com")], "/d"))
    assert target == "b"
    assert rules["a"] == current["a"]
    assert warnings[0].startswith(
        "kept add-rule 'b' on its own rule instead of folding it into overlapping rule 'a': "
    )


def test_failed_merge_leaves_rules_unchanged() -> None:
    current = {"a": rule([endpoint("h.com"), endpoint("other.com")], "/c")}
    snapshot = {"a": dict(current["a"])}
    with pytest.raises(MergeError):
        add_rule(current, "a", rule([endpoint("h.com")], "/d"))
    assert current == snapshot


def test_rule_without_endpoints_is_a_merge_error() -> None:
    with pytest.raises(MergeError, match="add-rule 'x' must contain at least one endpoint"):
        add_rule({}, "x", rule([], "/c"))


def test_mcp_contract_next_to_another_inspection_is_rejected() -> None:
    current = {"a": rule([rest("h.com", 443, "GET")], "/c")}
    mcp = {
        "host": "h.com",
        "port": 443,
        "path": "/mcp",
        "protocol": "mcp",
        "enforcement": "enforce",
        "rules": [{"allow": {"method": "tools/list"}}],
    }
    with pytest.raises(
        MergeError, match=r"h.com:443 would carry more than one L7 inspection contract"
    ):
        add_rule(current, "b", rule([mcp], "/c"))


def test_l4_endpoint_is_promoted_to_mcp_when_folded() -> None:
    current = {"a": rule([endpoint("h.com")], "/c")}
    mcp = {
        "host": "h.com",
        "port": 443,
        "protocol": "mcp",
        "mcp": {"max_body_bytes": 1024},
        "rules": [{"allow": {"method": "tools/list"}}],
    }
    rules, _, _ = merged(current, "a", rule([mcp], "/c"))
    assert rules["a"]["endpoints"][0]["protocol"] == "mcp"
    assert rules["a"]["endpoints"][0]["mcp"] == {"max_body_bytes": 1024}


def test_merge_error_is_reported_as_application_error_without_running_the_model() -> None:
    current = {"a": rule([endpoint("h.com"), endpoint("other.com")], "/c")}
    assessment = assess(current, "a", rule([endpoint("h.com")], "/d"))
    assert assessment.application_error == (
        "merge failed: merge operation 0 add-rule 'a' would grant binary '/d' undeclared "
        "authorization for other.com on ports [443]"
    )
    assert assessment.validation_result == ""
    assert assessment.findings == [] and not assessment.no_new_findings
    assert assessment.merged_policy is None and assessment.needs_review
    assert not assessment.auto_approvable


def test_empty_endpoint_list_in_a_chunk_is_a_merge_failure() -> None:
    assessment = assess(None, "x", rule([], "/c"))
    assert (
        assessment.application_error
        == "merge failed: merge operation 0 add-rule 'x' must contain at least one endpoint"
    )

"""Mechanistic canonicalisation against the current policy's endpoint contracts."""

from __future__ import annotations

import pytest

from prover.proposal.canonical import CanonicalizationError, canonicalize
from tests.prover.proposal.helpers import assess, endpoint, rest, rule


def test_observation_adopts_the_single_existing_contract_and_owner() -> None:
    rules = {
        "cargo": rule(
            [rest("index.crates.io", 443, access="read-only")], "/usr/bin/cargo", "/usr/bin/curl"
        )
    }
    name, canonical = canonicalize(
        rules, "allow_x", rule([endpoint("index.crates.io")], "/usr/bin/curl")
    )
    assert name == "cargo"
    assert canonical["endpoints"] == [rest("index.crates.io", 443, access="read-only")]


def test_owner_must_already_cover_the_binary_else_requested_name_is_suffixed() -> None:
    rules = {
        "cargo": rule([rest("index.crates.io", 443, access="read-only")], "/usr/bin/cargo"),
        "allow_x": rule([endpoint("other.org")], "/usr/bin/curl"),
    }
    name, canonical = canonicalize(
        rules, "allow_x", rule([endpoint("index.crates.io")], "/usr/bin/curl")
    )
    assert name == "allow_x_2"
    assert canonical["name"] == "allow_x_2"


def test_multi_port_contract_is_narrowed_to_the_observed_port() -> None:
    multi = {
        "host": "h.com",
        "ports": [443, 8443],
        "protocol": "rest",
        "enforcement": "enforce",
        "access": "read-only",
    }
    _, canonical = canonicalize(
        {"a": rule([multi], "/c")}, "n", rule([endpoint("h.com", 8443)], "/d")
    )
    assert canonical["endpoints"][0]["port"] == 8443 and "ports" not in canonical["endpoints"][0]


def test_two_distinct_contracts_cannot_be_canonicalised() -> None:
    rules = {
        "a": rule([rest("h.com", 443, access="read-only")], "/c"),
        "b": rule([rest("h.com", 443, access="full")], "/c"),
    }
    with pytest.raises(
        CanonicalizationError, match=r"cannot infer one existing endpoint contract for h\.com:443"
    ):
        canonicalize(rules, "n", rule([endpoint("h.com")], "/d"))


def test_no_contract_or_unsuitable_shape_leaves_the_proposal_unchanged() -> None:
    proposal = rule([endpoint("new.com")], "/d")
    assert canonicalize({}, "n", proposal) == ("n", proposal)
    two = rule([endpoint("a.com"), endpoint("b.com")], "/d")
    assert canonicalize({"a": rule([endpoint("a.com")], "/c")}, "n", two) == ("n", two)


def test_canonicalisation_failure_is_an_application_error_in_mechanistic_mode_only() -> None:
    current = {
        "a": rule([rest("h.com", 443, access="read-only")], "/c"),
        "b": rule([rest("h.com", 443, access="full")], "/c"),
    }
    failed = assess(current, "n", rule([endpoint("h.com")], "/d"), mode="mechanistic")
    assert failed.application_error == (
        "candidate canonicalization failed: "
        "cannot infer one existing endpoint contract for h.com:443"
    )
    agent = assess(current, "n", rule([endpoint("h.com")], "/d"))
    assert agent.application_error is None or not agent.application_error.startswith(
        "candidate canonicalization"
    )


def test_mechanistic_l4_observation_on_inspected_endpoint_keeps_inspection() -> None:
    current = {"gh": rule([rest("api.github.com", 443, access="read-only")], "/usr/bin/gh")}
    assessment = assess(
        current,
        "allow_api",
        rule([endpoint("api.github.com")], "/usr/bin/curl"),
        mode="mechanistic",
    )
    assert assessment.proposed_rule["endpoints"] == [
        rest("api.github.com", 443, access="read-only")
    ]
    assert assessment.no_new_findings and assessment.target_rule == "gh"
    assert "/usr/bin/curl" in assessment.merged_policy

"""The §9.7 binary symlink rules, held to their pair-by-pair definition."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from prover.checks.binary_paths import (
    DENY_UNDER_GLOB_REASON,
    EXACT_UNDER_GLOB_REASON,
    UNIVERSAL,
    exact_binary_under_glob,
    exact_deny_under_glob,
    glob_crate_matches,
)
from prover.policy.loader import load_policy
from prover.policy.model import Endpoint, Policy, Rule
from prover.policy.normalize import normalize


def _policy(rules: list[dict[str, object]]) -> Policy:
    document = {"version": 1, "network_policies": {f"r{i}": r for i, r in enumerate(rules)}}
    return normalize(load_policy(json.dumps(document)))


# -- the definition, one pair of rules at a time (spec §9.7) ---------------------------
def _overlap(first: Rule, second: Rule) -> bool:
    def endpoints(a: Endpoint, b: Endpoint) -> bool:
        return bool(set(a.ports) & set(b.ports)) and (
            a.host == b.host or "*" in a.host or "*" in b.host
        )

    return any(endpoints(a, b) for a in first.endpoints for b in second.endpoints)


def _authority(rule: Rule) -> frozenset[object]:
    return frozenset(
        (
            e.host,
            frozenset(e.ports),
            e.layer,
            e.path,
            e.allowed_ips,
            frozenset((r.method, r.path, r.query) for r in e.allow_rules),
            frozenset((r.method, r.path, r.query) for r in e.deny_rules),
        )
        for e in rule.endpoints
    )


def _globs(rule: Rule) -> list[str]:
    return [b for b in rule.binaries if "*" in b and b != UNIVERSAL]


def _rule_one(candidate: Policy, boundary: Policy) -> str | None:
    for glob_rule in boundary.rules:
        for cand_rule in candidate.rules:
            if not _globs(glob_rule) or not _overlap(glob_rule, cand_rule):
                continue
            for exact in (b for b in cand_rule.binaries if "*" not in b):
                if any(glob_crate_matches(g, exact) for g in _globs(glob_rule)) and not any(
                    exact in r.binaries and _authority(r) == _authority(cand_rule)
                    for r in boundary.rules
                ):
                    return EXACT_UNDER_GLOB_REASON
    return None


def _rule_two(candidate: Policy, boundary: Policy) -> str | None:
    def denies(rule: Rule) -> bool:
        return any(e.deny_rules for e in rule.endpoints)

    for bound_rule in boundary.rules:
        for cand_rule in candidate.rules:
            if not (denies(bound_rule) and denies(cand_rule) and _overlap(bound_rule, cand_rule)):
                continue
            exacts = [b for b in bound_rule.binaries if "*" not in b]
            if any(glob_crate_matches(g, x) for g in _globs(cand_rule) for x in exacts):
                return DENY_UNDER_GLOB_REASON
    return None


ENDPOINT = st.fixed_dictionaries(
    {
        "host": st.sampled_from(["a.example.com", "b.example.com", "*.example.com"]),
        "port": st.sampled_from([443, 8443]),
        "protocol": st.just("rest"),
        "enforcement": st.just("enforce"),
        "access": st.sampled_from(["read-only", "full"]),
    },
    optional={"deny_rules": st.just([{"method": "DELETE", "path": "/**"}])},
)
RULE = st.fixed_dictionaries(
    {
        "endpoints": st.lists(ENDPOINT, min_size=1, max_size=2),
        "binaries": st.lists(
            st.sampled_from(
                ["/usr/bin/curl", "/usr/bin/gh", "/usr/bin/*", "/usr/**", "/opt/*/bin/x", "/**"]
            ).map(lambda path: {"path": path}),
            min_size=1,
            max_size=2,
        ),
    }
)


@settings(max_examples=300, deadline=None)
@given(st.lists(RULE, max_size=4), st.lists(RULE, max_size=4))
def test_the_indexed_rules_agree_with_the_pair_by_pair_definition(
    candidate_rules: list[dict[str, object]], boundary_rules: list[dict[str, object]]
) -> None:
    candidate, boundary = _policy(candidate_rules), _policy(boundary_rules)
    assert exact_binary_under_glob(candidate, boundary) == _rule_one(candidate, boundary)
    assert exact_deny_under_glob(candidate, boundary) == _rule_two(candidate, boundary)


def test_an_exact_binary_under_an_overlapping_boundary_glob_must_be_listed_with_its_authority() -> (
    None
):
    gh = {"host": "api.github.com", "port": 443}
    candidate = _policy([{"endpoints": [gh], "binaries": [{"path": "/usr/bin/gh"}]}])
    globbed = {"endpoints": [gh], "binaries": [{"path": "/usr/bin/*"}]}
    assert exact_binary_under_glob(candidate, _policy([globbed])) == EXACT_UNDER_GLOB_REASON
    listed = {"endpoints": [gh], "binaries": [{"path": "/usr/bin/gh"}]}
    assert exact_binary_under_glob(candidate, _policy([globbed, listed])) is None
    elsewhere = {
        "endpoints": [{"host": "other.example", "port": 443}],
        "binaries": [{"path": "/usr/bin/*"}],
    }
    assert exact_binary_under_glob(candidate, _policy([elsewhere])) is None

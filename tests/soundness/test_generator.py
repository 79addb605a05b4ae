"""The campaign's generator and action sampler: valid, deterministic, varied, honest."""

from __future__ import annotations

import ipaddress
from collections import Counter
from functools import cache

from prover.concrete import allows
from prover.concrete.ip import CONTROL_PORTS, GATEWAY_ALIASES
from prover.policy.loader import load_policy
from prover.policy.shape import shape_problem
from tests.soundness.actions import filesystem_actions, network_actions, path_instance
from tests.soundness.oracle import load
from tests.soundness.pairs import FAMILIES, pair_rng, policy_pair

SEED = 11
COUNT = 300


@cache
def pairs() -> tuple:
    return tuple(policy_pair(SEED, index) for index in range(COUNT))


def test_every_generated_policy_is_valid_input_for_the_loader() -> None:
    for pair in pairs():
        load_policy(pair.candidate)
        load_policy(pair.boundary)


def test_a_pair_is_a_pure_function_of_seed_and_index() -> None:
    again = policy_pair(SEED, 17)
    assert (again.candidate, again.boundary) == (pairs()[17].candidate, pairs()[17].boundary)
    assert policy_pair(SEED + 1, 17).boundary != again.boundary


def test_every_family_of_derivation_occurs() -> None:
    assert {p.family for p in pairs()} == set(FAMILIES)


def test_most_generated_boundaries_are_inside_the_modelled_shapes() -> None:
    """Nearly all within the extended analysis's model; a good share (not all) within the
    reference model, so both the concrete evaluator and the runtime model judge."""
    loaded = [load_policy(p.boundary) for p in pairs()]
    extended = sum(shape_problem(p, extended=True) is None for p in loaded)
    reference = sum(shape_problem(p) is None for p in loaded)
    assert extended >= 0.9 * COUNT
    assert 0.25 * COUNT <= reference <= 0.75 * COUNT


def test_the_generator_covers_the_constructs_beyond_the_reference_model() -> None:
    text = "\n".join(p.boundary + p.candidate for p in pairs())
    for feature in (
        "protocol: websocket",
        "protocol: mcp",
        "protocol: json-rpc",
        "protocol: graphql",
        "protocol: sql",
        "enforcement: audit",
        "tls: skip",
        "credential_binding",
        "allow_encoded_slash",
        "network_middlewares",
        "fail_open",
        "tool: search",
    ):
        assert feature in text, feature
    mutations = {m for p in pairs() for m in p.mutations}
    assert {"ext:to_audit", "ext:drop_opaque_rule", "ext:change_opaque_rule"} <= mutations


def test_the_generator_covers_the_policy_features_the_model_covers() -> None:
    text = "\n".join(p.boundary + p.candidate for p in pairs())
    for feature in (
        "include_workdir",
        "run_as_user",
        "hard_requirement",
        "'**.",
        "api*.",
        "ports:",
        "allowed_ips",
        "/32",
        "::ffff:",
        "protocol: tcp",
        "access: read-only",
        "access: full",
        "deny_rules",
        "query",
        "'*'",
        "''",
        "/usr/bin/*",
        "/**/",
        "M-SEARCH",
        "host.openshell.internal",
    ):
        assert feature in text, feature


def test_path_instances_fill_wildcards_including_empty_segments() -> None:
    rng = pair_rng(0, 0)
    seen = {path_instance("/a/**/b/*", rng) for _ in range(300)}
    assert "/a/b/" in seen
    assert any(p.count("/") > 3 for p in seen)


def test_sampled_actions_are_allowed_by_the_candidate_and_cover_the_edge_values() -> None:
    features: Counter[str] = Counter()
    for pair in pairs()[:80]:
        try:
            candidate, boundary = load(pair.candidate), load(pair.boundary)
        except ValueError:
            continue  # a shape the model does not cover
        for action in network_actions(candidate, boundary, pair_rng(SEED, pair.index)):
            assert allows(candidate, action)
            ip = action.destination_ip
            features["identity" if action.binary_identity_required else "anonymous"] += 1
            features[action.protocol] += 1
            features["HEAD"] += action.method == "HEAD"
            features["mapped"] += isinstance(ip, ipaddress.IPv6Address) and bool(ip.ipv4_mapped)
            features["private"] += ip.is_private
            features["control_port"] += action.port in CONTROL_PORTS
            features["trusted_gateway"] += (
                action.trusted_gateway and action.host.lower() in GATEWAY_ALIASES
            )
            features["dotted_query"] += any("." in v for _, vs in action.query for v in vs)
            features["empty_last_segment"] += bool(action.path and action.path.endswith("/"))
            features["ancestor"] += action.binary != action.ancestor_binary
        for fs_action in filesystem_actions(candidate):
            features[f"fs_{fs_action.access}"] += 1
    for feature in (
        "identity",
        "anonymous",
        "l4",
        "rest",
        "HEAD",
        "mapped",
        "private",
        "control_port",
        "trusted_gateway",
        "dotted_query",
        "empty_last_segment",
        "ancestor",
        "fs_read",
        "fs_write",
    ):
        assert features[feature] > 0, feature

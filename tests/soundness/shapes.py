"""Edits that take a policy outside the shapes the prover models (spec §5).

A small share of the campaign's pairs carries one of these, so that ``unsupported``
occurs for the reasons real users hit, without dominating the mix.
"""

from __future__ import annotations

import copy
import random

from tests.soundness import vocabulary as v
from tests.soundness.documents import Operation, choice, endpoints_of, is_rest, rules_of
from tests.soundness.generator import Document, Plan, fresh_key


def other_protocol(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if is_rest(ep)])
    if ep is None:
        return None
    ep["protocol"] = rng.choice(("graphql", "websocket"))
    return "shape_protocol"


def audit_enforcement(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if is_rest(ep)])
    if ep is None:
        return None
    ep["enforcement"] = "audit"
    return "shape_audit"


def outside_authority(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc)])
    if ep is None:
        return None
    if is_rest(ep) and rng.random() < 0.5:
        ep["allow_encoded_slash"] = True
    else:
        ep["tls"] = "skip"
    return "shape_authority"


def blocked_ips(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc)])
    if ep is None:
        return None
    ep["allowed_ips"] = [rng.choice(v.UNSUPPORTED_ALLOWED_IPS)]
    return "shape_allowed_ips"


def unsupported_host(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc)])
    if ep is None:
        return None
    ep["host"] = rng.choice(("*", "**", "10.0.*.*", "api.s3-*.example.com", "a**.example.com"))
    return "shape_host"


def glob_query(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if ep.get("rules")])
    if ep is None:
        return None
    value: object = rng.choice(("git-*", {"any": ["a", "b"]}, "v[0-9]"))
    ep["rules"][0]["allow"].setdefault("query", {})["ref"] = value
    return "shape_query"


def glob_binary_meta(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    r = choice(rng, list(rules_of(doc).values()))
    if r is None:
        return None
    r.setdefault("binaries", []).append({"path": rng.choice(("/usr/bin/py?", "/usr/bin/{a,b}"))})
    return "shape_binary"


def unsupported_identity(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    doc.setdefault("process", {})["run_as_user"] = rng.choice(v.UNSUPPORTED_IDENTITIES)
    return "shape_identity"


def middleware(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    doc["network_middlewares"] = {
        "redact": {"middleware": "openshell/regex", "endpoints": {"include": ["api.example.com"]}}
    }
    return "shape_middleware"


def overlapping_layers(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    """An L4 twin of a REST endpoint on the same host and port."""
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if is_rest(ep)])
    if ep is None:
        return None
    twin = {k: copy.deepcopy(ep[k]) for k in ("host", "port", "ports", "allowed_ips") if k in ep}
    rules_of(doc)[fresh_key(doc, rng)] = {"endpoints": [twin], "binaries": [{"path": "/**"}]}
    return "shape_l4_rest_overlap"


def exact_and_wildcard(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    """An exact host and a wildcard host without ``allowed_ips`` on one port."""
    port = rng.choice(v.ORDINARY_PORTS)
    rules_of(doc)[fresh_key(doc, rng)] = {
        "endpoints": [
            {"host": "api.example.com", "port": port},
            {"host": "*.other.org", "port": port},
        ],
        "binaries": [{"path": "/usr/bin/curl"}],
    }
    return "shape_exact_wildcard"


def over_limit(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    """Over a resource limit of spec §4 (``inconclusive``): a pattern longer than 4,096
    bytes, or more than 256 query matchers."""
    r = choice(rng, list(rules_of(doc).values()))
    if r is None:
        return None
    if rng.random() < 0.5:
        r.setdefault("binaries", []).append({"path": "/opt/" + "a" * 4_092})
        return "limit_longest_pattern"
    query = {f"k{i}": "*" for i in range(257)}
    r.setdefault("endpoints", []).append(
        {
            "host": "api.example.com",
            "port": 443,
            "protocol": "rest",
            "enforcement": "enforce",
            "rules": [{"allow": {"method": "GET", "path": "/**", "query": query}}],
        }
    )
    return "limit_query_matchers"


BREAK: tuple[Operation, ...] = (
    other_protocol,
    audit_enforcement,
    outside_authority,
    blocked_ips,
    unsupported_host,
    glob_query,
    glob_binary_meta,
    unsupported_identity,
    middleware,
    overlapping_layers,
    exact_and_wildcard,
)
LIMITS: tuple[Operation, ...] = (over_limit,)

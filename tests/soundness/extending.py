"""Mutations of the constructs beyond the reference model (opaque protocols, audit,
``tls: skip``): narrowings, widenings and swaps of one endpoint's configuration."""

from __future__ import annotations

import random

from tests.soundness.documents import Operation, choice, endpoints_of
from tests.soundness.generator import Document, Plan, middlewares

_OPAQUE = ("websocket", "mcp", "json-rpc", "graphql", "sql")


def _opaque(doc: Document) -> list[Document]:
    return [ep for _, ep in endpoints_of(doc) if str(ep.get("protocol", "")).lower() in _OPAQUE]


def _inspected(doc: Document) -> list[Document]:
    return [ep for _, ep in endpoints_of(doc) if ep.get("protocol") not in (None, "tcp")]


def to_audit(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [e for e in _inspected(doc) if e.get("enforcement") == "enforce"])
    if ep is None:
        return None
    ep["enforcement"] = "audit"
    return "ext:to_audit"


def to_tls_skip(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [e for e in _inspected(doc) if e.get("tls") != "skip"])
    if ep is None:
        return None
    ep["tls"] = "skip"
    ep.pop("deny_rules", None)
    return "ext:to_tls_skip"


def to_enforce(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [e for e in _inspected(doc) if e.get("enforcement") != "enforce"])
    if ep is None:
        return None
    ep["enforcement"] = "enforce"
    return "ext:to_enforce"


def drop_opaque_rule(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [e for e in _opaque(doc) if len(e.get("rules", [])) > 1])
    if ep is None:
        return None
    ep["rules"].pop(rng.randrange(len(ep["rules"])))
    return "ext:drop_opaque_rule"


def change_opaque_rule(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [e for e in _opaque(doc) if e.get("rules")])
    if ep is None:
        return None
    allow = rng.choice(ep["rules"]).get("allow") or {}
    if "tool" in allow:
        allow["tool"] = rng.choice(("delete_repo", "search_all"))
    elif "method" in allow:
        allow["method"] = rng.choice(("eth_sendTransaction", "GET", "tools/call"))
    else:
        allow["operation_type"] = "mutation"
    return "ext:change_opaque_rule"


def opaque_to_l4(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, _opaque(doc))
    if ep is None:
        return None
    for key in ("protocol", "enforcement", "rules", "deny_rules", "path"):
        ep.pop(key, None)
    return "ext:opaque_to_l4"


def to_any_binary(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    rules = [r for r in (doc.get("network_policies") or {}).values() if r.get("binaries")]
    rule = choice(rng, rules)
    if rule is None:
        return None
    rule["binaries"][rng.randrange(len(rule["binaries"]))] = {"path": "**"}
    return "ext:to_any_binary"


def add_own_middleware(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    """A middleware entry only the candidate has: it only restricts (always applicable,
    so drawn sparingly to leave room for the other operations)."""
    if rng.random() < 0.75:
        return None
    own = middlewares(rng)
    existing = doc.setdefault("network_middlewares", {})
    name = next((n for n in own if n not in existing), None)
    if name is None:
        return None
    existing[name + "_own"] = own[name]
    return "ext:add_own_middleware"


def drop_middleware(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    """Drop one middleware entry: the candidate is no longer restricted by it."""
    entries = doc.get("network_middlewares") or {}
    if not entries:
        return None
    del entries[rng.choice(sorted(entries))]
    return "ext:drop_middleware"


EXT_NARROW: tuple[Operation, ...] = (to_enforce, drop_opaque_rule, add_own_middleware)
EXT_WIDEN: tuple[Operation, ...] = (
    to_audit,
    to_tls_skip,
    opaque_to_l4,
    to_any_binary,
    drop_middleware,
)
EXT_SWAP: tuple[Operation, ...] = (change_opaque_rule,)

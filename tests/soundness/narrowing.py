"""Narrowing mutations: a candidate derived from a boundary by taking authority away.

The labels are informational only: removing a rule that carries deny rules widens a
policy, for example, so the campaign never predicts verdicts from them; the concrete
evaluator is the only judge.
"""

from __future__ import annotations

import ipaddress
import random

from prover.concrete.glob import binary_matches
from tests.soundness import vocabulary as v
from tests.soundness.documents import (
    Operation,
    allow_matchers,
    choice,
    endpoints_of,
    has_denies,
    ip_lists,
    is_rest,
    replace_ips,
    rules_of,
    section,
)
from tests.soundness.generator import Document, Plan, matcher, query_map


def remove_rule(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    rules = rules_of(doc)
    keys = [k for k, r in rules.items() if not has_denies(r)] or list(rules)
    key = choice(rng, keys)
    if key is None:
        return None
    del rules[key]
    return "remove_rule"


def remove_endpoint(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    r = choice(rng, [r for r in rules_of(doc).values() if len(r.get("endpoints", [])) > 1])
    if r is None:
        return None
    r["endpoints"].pop(rng.randrange(len(r["endpoints"])))
    return "remove_endpoint"


def remove_binary(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    r = choice(rng, [r for r in rules_of(doc).values() if len(r.get("binaries", [])) > 1])
    if r is None:
        return None
    r["binaries"].pop(rng.randrange(len(r["binaries"])))
    return "remove_binary"


def remove_port(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if len(ep.get("ports", [])) > 1])
    if ep is None:
        return None
    ep["ports"].pop(rng.randrange(len(ep["ports"])))
    return "remove_port"


def remove_allow(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if len(ep.get("rules", [])) > 1])
    if ep is None:
        return None
    ep["rules"].pop(rng.randrange(len(ep["rules"])))
    return "remove_allow"


def narrow_method(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    wide = [m for m in allow_matchers(doc) if m.get("method") == "*"]
    presets = [ep for _, ep in endpoints_of(doc) if ep.get("access") in ("full", "read-write")]
    if wide and (not presets or rng.random() < 0.5):
        rng.choice(wide)["method"] = rng.choice(("GET", "POST", "DELETE", "get"))
        return "narrow_method"
    ep = choice(rng, presets)
    if ep is None:
        return None
    ep["access"] = "read-write" if ep["access"] == "full" else "read-only"
    return "narrow_preset"


def preset_to_rules(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if ep.get("access")])
    if ep is None:
        return None
    methods = {"read-only": ["GET", "HEAD", "OPTIONS"], "read-write": ["GET", "POST", "PUT"]}
    allowed = methods.get(ep.pop("access"), ["GET", "POST", "DELETE", "*"])
    ep["rules"] = [
        {"allow": {"method": m, "path": rng.choice(("/**", "/v1/**", "/v1/models"))}}
        for m in rng.sample(allowed, rng.randint(1, len(allowed)))
    ]
    return "preset_to_rules"


_NARROWER_PATHS = {
    "/**": "/v1/**",
    "**": "/repos/**",
    "/v1/**": "/v1/models",
    "/repos/**": "/repos/*/*/issues",
    "/v1/*": "/v1/models",
    "/items/*": "/items/a",
}


def narrow_path(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, allow_matchers(doc))
    if m is None:
        return None
    m["path"] = _NARROWER_PATHS.get(m.get("path", "**"), "/v1/models")
    return "narrow_path"


def add_query(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, allow_matchers(doc))
    if m is None:
        return None
    m.setdefault("query", {}).update(query_map(rng))
    return "add_query"


def add_deny(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if is_rest(ep)])
    if ep is None:
        return None
    ep.setdefault("deny_rules", []).append(matcher(rng, deny=True))
    return "add_deny"


def narrow_ips(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    old = choice(rng, ip_lists(doc))
    if old is None:
        return None
    new: list[str] = []
    for entry in old:
        net = ipaddress.ip_network(entry, strict=False)
        step = min(net.max_prefixlen - net.prefixlen, rng.choice((1, 8)))
        subnets = list(net.subnets(prefixlen_diff=step)) if step else [net]
        new.append(str(rng.choice([subnets[0], subnets[-1]])))
    if len(new) > 1 and rng.random() < 0.5:
        new.pop(rng.randrange(len(new)))
    replace_ips(doc, old, new)
    return "narrow_ips"


def exact_binary(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    globs = [b for r in rules_of(doc).values() for b in r.get("binaries", []) if "*" in b["path"]]
    b = choice(rng, globs)
    if b is None:
        return None
    matching = [e for e in v.EXACT_BINARIES if binary_matches(b["path"], e)]
    b["path"] = rng.choice(matching) if matching else b["path"].replace("**", "a").replace("*", "a")
    return "exact_binary"


def landlock_hard(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    doc["landlock"] = {"compatibility": "hard_requirement"}
    return "landlock_hard"


def filesystem_remove(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    fs = doc.get("filesystem_policy")
    if not fs:
        return None
    lists = [name for name in ("read_only", "read_write") if fs.get(name)]
    name = choice(rng, lists)
    if name is None:
        return None
    fs[name].pop(rng.randrange(len(fs[name])))
    return "filesystem_remove"


def workdir_off(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    section(doc, "filesystem_policy")["include_workdir"] = False
    return "workdir_off"


NARROW: tuple[Operation, ...] = (
    remove_rule,
    remove_endpoint,
    remove_binary,
    remove_port,
    remove_allow,
    remove_allow,
    narrow_method,
    preset_to_rules,
    narrow_path,
    narrow_path,
    add_query,
    add_deny,
    narrow_ips,
    exact_binary,
    landlock_hard,
    filesystem_remove,
    workdir_off,
)

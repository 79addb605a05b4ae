"""Swapping mutations: a candidate that differs from its boundary in one dimension."""

from __future__ import annotations

import random

from tests.soundness import vocabulary as v
from tests.soundness.documents import (
    Operation,
    allow_matchers,
    choice,
    endpoints_of,
    ip_lists,
    is_rest,
    ports_of,
    replace_ips,
    rules_of,
    section,
)
from tests.soundness.generator import PRESETS, Document, Plan, pick_host, rest_fields


def swap_host(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc)])
    if ep is None:
        return None
    kind = "wildcard" if "*" in ep.get("host", "") else "exact"
    ep["host"] = pick_host(rng, kind)
    return "swap_host"


def swap_port(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc)])
    if ep is None:
        return None
    same_class = [c.ports for c in plan if set(ports_of(ep)) & set(c.ports)]
    pool = list(same_class[0]) if same_class and rng.random() < 0.5 else list(v.ORDINARY_PORTS)
    ep.pop("ports", None)
    ep["port"] = rng.choice(pool)
    return "swap_port"


def swap_method(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, allow_matchers(doc))
    if m is None:
        return None
    m["method"] = rng.choice(v.METHODS)
    return "swap_method"


def swap_path(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, allow_matchers(doc))
    if m is None:
        return None
    m["path"] = rng.choice(v.RULE_PATHS)
    return "swap_path"


def swap_binary(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    b = choice(rng, [b for r in rules_of(doc).values() for b in r.get("binaries", [])])
    if b is None:
        return None
    b["path"] = rng.choice((*v.EXACT_BINARIES, *v.GLOB_BINARIES))
    return "swap_binary"


def swap_query(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, [m for m in allow_matchers(doc) if m.get("query")])
    if m is None:
        return None
    m["query"][rng.choice(list(m["query"]))] = rng.choice((*v.QUERY_VALUES, "*"))
    return "swap_query"


def swap_ips(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    old = choice(rng, ip_lists(doc))
    if old is None:
        return None
    replace_ips(doc, old, rng.sample(v.ALLOWED_IPS, rng.randint(1, 2)))
    return "swap_ips"


def swap_identity(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    section(doc, "process")[rng.choice(("run_as_user", "run_as_group"))] = rng.choice(v.IDENTITIES)
    return "swap_identity"


def swap_preset(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if ep.get("access")])
    if ep is None:
        return None
    ep["access"] = rng.choice(PRESETS)
    return "swap_preset"


def swap_layer(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if not is_rest(ep)])
    if ep is None:
        return None
    ep.pop("protocol", None)
    rest_fields(rng, ep)
    return "l4_to_rest"


SWAP: tuple[Operation, ...] = (
    swap_host,
    swap_port,
    swap_method,
    swap_method,
    swap_path,
    swap_path,
    swap_binary,
    swap_query,
    swap_ips,
    swap_identity,
    swap_preset,
    swap_layer,
)

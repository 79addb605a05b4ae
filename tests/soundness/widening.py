"""Widening mutations: a candidate derived from a boundary by adding authority."""

from __future__ import annotations

import copy
import ipaddress
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
from tests.soundness.generator import Document, Plan, endpoint, fresh_key, matcher, rule


def add_rule(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    rules_of(doc)[fresh_key(doc, rng)] = rule(rng, plan)
    return "add_rule"


def add_foreign_rule(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep: Document = {"host": rng.choice(v.FOREIGN_HOSTS), "port": 443}
    if rng.random() < 0.5:
        ep.update({"protocol": "rest", "enforcement": "enforce", "access": "full"})
    rules_of(doc)[fresh_key(doc, rng)] = {"endpoints": [ep], "binaries": [{"path": "/**"}]}
    return "add_foreign_rule"


def add_endpoint(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    r = choice(rng, list(rules_of(doc).values()))
    if r is None:
        return None
    r.setdefault("endpoints", []).append(endpoint(rng, rng.choice(plan)))
    return "add_endpoint"


def copy_endpoint(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    rules = list(rules_of(doc).values())
    sources = [ep for r in rules for ep in r.get("endpoints", [])]
    if len(rules) < 2 or not sources:
        return None
    rng.choice(rules).setdefault("endpoints", []).append(copy.deepcopy(rng.choice(sources)))
    return "copy_endpoint"


def add_binary(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    r = choice(rng, list(rules_of(doc).values()))
    if r is None:
        return None
    path = rng.choice((*v.EXACT_BINARIES, *v.GLOB_BINARIES))
    if all(b["path"] != path for b in r.setdefault("binaries", [])):
        r["binaries"].append({"path": path})
    return "add_binary"


def glob_binary(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    exact = [
        b for r in rules_of(doc).values() for b in r.get("binaries", []) if "*" not in b["path"]
    ]
    b = choice(rng, exact)
    if b is None:
        return None
    b["path"] = rng.choice((b["path"].rsplit("/", 1)[0] + "/*", "/usr/**", "/**"))
    return "glob_binary"


def add_port(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc)])
    if ep is None:
        return None
    same_class = [c.ports for c in plan if set(ports_of(ep)) & set(c.ports)]
    pool = list(same_class[0]) if same_class and rng.random() < 0.6 else list(v.ORDINARY_PORTS)
    ports = sorted({*ports_of(ep), rng.choice(pool)})
    ep.pop("port", None)
    ep["ports"] = ports
    return "add_port"


def widen_method(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    presets = [ep for _, ep in endpoints_of(doc) if ep.get("access") in ("read-only", "read-write")]
    m = choice(rng, [m for m in allow_matchers(doc) if m.get("method") != "*"])
    if m is not None and (not presets or rng.random() < 0.6):
        m["method"] = rng.choice(("*", "POST", "DELETE", "PURGE"))
        return "widen_method"
    ep = choice(rng, presets)
    if ep is None:
        return None
    ep["access"] = "full" if ep["access"] == "read-write" else rng.choice(("read-write", "full"))
    return "widen_preset"


def add_allow(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if ep.get("rules")])
    if ep is None:
        return None
    ep["rules"].append({"allow": matcher(rng, deny=False)})
    return "add_allow"


def remove_deny(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if ep.get("deny_rules")])
    if ep is None:
        return None
    ep["deny_rules"].pop(rng.randrange(len(ep["deny_rules"])))
    if not ep["deny_rules"]:
        del ep["deny_rules"]
    return "remove_deny"


def remove_query(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, [m for m in allow_matchers(doc) if m.get("query")])
    if m is None:
        return None
    del m["query"]
    return "remove_query"


def query_wildcard(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, [m for m in allow_matchers(doc) if m.get("query")])
    if m is None:
        return None
    m["query"][rng.choice(list(m["query"]))] = "*"
    return "query_wildcard"


def widen_path(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    m = choice(rng, allow_matchers(doc))
    if m is None:
        return None
    m["path"] = rng.choice(("/**", "**", "/v1/**", "/*"))
    return "widen_path"


def widen_ips(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    old = choice(rng, ip_lists(doc))
    if old is None:
        return None
    new = list(old)
    if rng.random() < 0.5:
        new.append(rng.choice(v.ALLOWED_IPS))
    else:
        index = rng.randrange(len(new))
        net = ipaddress.ip_network(new[index], strict=False)
        new[index] = str(net.supernet(prefixlen_diff=min(net.prefixlen, 8)))
    replace_ips(doc, old, [ip for ip in new if ip not in ("0.0.0.0/0", "::/0")] or old)
    return "widen_ips"


def drop_ips(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    old = choice(rng, ip_lists(doc))
    if old is None:
        return None
    replace_ips(doc, old, [])
    return "drop_ips"


def wildcard_host(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if "*" not in ep.get("host", "*")])
    if ep is None or ep["host"].count(".") < 1 or ep["host"] in v.IPV4_LITERAL_HOSTS:
        return None
    head, _, tail = ep["host"].partition(".")
    ep["host"] = rng.choice(("*.", "**.", head[:3] + "*.")) + tail
    return "wildcard_host"


def rest_to_l4(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    ep = choice(rng, [ep for _, ep in endpoints_of(doc) if is_rest(ep)])
    if ep is None:
        return None
    for key in ("protocol", "enforcement", "path", "access", "rules", "deny_rules"):
        ep.pop(key, None)
    return "rest_to_l4"


def landlock_best(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    if rng.random() < 0.5:
        doc.pop("landlock", None)
    else:
        doc["landlock"] = {"compatibility": "best_effort"}
    return "landlock_best"


def process_root(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    field = rng.choice(("run_as_user", "run_as_group"))
    section(doc, "process")[field] = rng.choice(("root", "0"))
    return "process_root"


def filesystem_add(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    fs = section(doc, "filesystem_policy")
    name = rng.choice(("read_only", "read_write"))
    pool = v.READ_ONLY_PATHS if name == "read_only" else v.READ_WRITE_PATHS
    fs.setdefault(name, []).append(rng.choice((*pool, *v.OTHER_PATHS[:3])))
    return "filesystem_add"


def workdir_on(doc: Document, plan: Plan, rng: random.Random) -> str | None:
    if rng.random() < 0.3:
        doc.pop("filesystem_policy", None)
    else:
        section(doc, "filesystem_policy")["include_workdir"] = True
    return "workdir_on"


WIDEN: tuple[Operation, ...] = (
    add_rule,
    add_foreign_rule,
    add_endpoint,
    copy_endpoint,
    add_binary,
    glob_binary,
    add_port,
    widen_method,
    widen_method,
    add_allow,
    remove_deny,
    remove_query,
    query_wildcard,
    widen_path,
    widen_ips,
    drop_ips,
    wildcard_host,
    rest_to_l4,
    landlock_best,
    process_root,
    filesystem_add,
    workdir_on,
)

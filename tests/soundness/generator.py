"""Random but realistic authored policies, as plain documents (dicts) and YAML text.

A policy is built on a *plan*: its ports are split into classes, and every endpoint on a
class shares the class's layer, ``allowed_ips`` and host kind. That is what real
policies look like, and it keeps generated policies inside the shapes the prover models
(spec §5: overlapping endpoints must agree on ``allowed_ips``, layer and implicit IP
mode). Shapes outside the model still occur, through mutations and ``break_shape``, but
they do not dominate.

Everything is drawn from a seeded ``random.Random``, so a (seed, index) pair names one
policy pair for good.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from tests.soundness import vocabulary as v

Document = dict[str, Any]
HostKind = Literal["exact", "wildcard", "any"]
PRESETS: tuple[str, ...] = ("read-only", "read-write", "full")
RULE_NAMES: tuple[str, ...] = (
    "github_api",
    "pypi",
    "inference",
    "internal",
    "database",
    "gateway",
    "npm",
    "misc",
)


@dataclass(frozen=True)
class PortClass:
    """Ports whose endpoints share layer, ``allowed_ips`` and host kind."""

    ports: tuple[int, ...]
    layer: Literal["l4", "rest", "opaque"]
    allowed_ips: tuple[str, ...]
    hosts: HostKind
    #: For ``opaque``: the endpoint configuration (JSON) every endpoint of the class
    #: shares, so that candidate and boundary often hold identical opaque endpoints.
    config: str = ""


Plan = tuple[PortClass, ...]


def make_plan(rng: random.Random) -> Plan:
    pool = [*v.ORDINARY_PORTS, *rng.sample(v.EDGE_PORTS, 2)]
    rng.shuffle(pool)
    classes: list[PortClass] = []
    for _ in range(rng.randint(1, 4)):
        size = min(len(pool), rng.choice((1, 1, 2)))
        ports, pool = tuple(pool[:size]), pool[size:]
        layer: Literal["l4", "rest", "opaque"] = rng.choice(("l4", "rest", "rest"))
        config = ""
        if rng.random() < 0.18:
            layer, config = "opaque", json.dumps(opaque_config(rng), sort_keys=True)
        if rng.random() < 0.35:
            ips = tuple(rng.sample(v.ALLOWED_IPS, rng.randint(1, 2)))
            kind: HostKind = "any"
        else:
            ips = ()
            kind = rng.choice(("exact", "exact", "wildcard"))
        classes.append(PortClass(ports, layer, ips, kind, config))
    return tuple(classes)


#: Protocols the reference model does not read, with an allow rule in each one's terms.
OPAQUE_RULES: dict[str, tuple[dict[str, Any], ...]] = {
    "websocket": ({"method": "GET", "path": "/ws"}, {"method": "GET", "path": "/socket/**"}),
    "mcp": ({"method": "tools/call", "tool": "search"}, {"method": "tools/list"}),
    "json-rpc": ({"method": "eth_call"}, {"method": "eth_getBalance"}),
    "graphql": ({"operation_type": "query"}, {"operation_type": "query", "fields": ["viewer"]}),
    "sql": ({"command": "SELECT"}, {"command": "*"}),
}
CREDENTIALS: tuple[dict[str, Any], ...] = (
    {"credential_binding": {"provider": "github"}},
    {"websocket_credential_rewrite": True},
    {"request_body_credential_rewrite": True},
    {"allow_uninspected_credentials": True},
    {"allow_encoded_slash": True},
)


def opaque_config(rng: random.Random) -> Document:
    """An endpoint configuration outside the reference model (protocol, rules, options)."""
    protocol = rng.choice(("websocket", "mcp", "json-rpc", "graphql", "sql", "websocket", "mcp"))
    config: Document = {"protocol": protocol}
    if rng.random() < 0.8:
        # (The runtime refuses SQL enforcement: validate_sandbox_policy.)
        config["enforcement"] = "audit" if protocol == "sql" else "enforce"
    rules = OPAQUE_RULES[protocol]
    config["rules"] = [{"allow": dict(r)} for r in rng.sample(rules, rng.randint(1, len(rules)))]
    if rng.random() < 0.2:
        config["path"] = rng.choice(v.SELECTOR_PATHS)
    if rng.random() < 0.15:
        config.update(rng.choice(CREDENTIALS))
    return config


def extend_endpoint(rng: random.Random, endpoint: Document, port_class: PortClass) -> None:
    """Constructs beyond the reference model on ordinary endpoints, at realistic rates:
    audit-mode REST, ``tls: skip``, credential features, REST fields without a
    protocol, hostless ``allowed_ips`` endpoints."""
    rest = endpoint.get("protocol") in ("rest", "REST")
    roll = rng.random()
    if rest and roll < 0.06:
        endpoint["enforcement"] = rng.choice(("audit", "audit", "Enforce"))
        if rng.random() < 0.5:
            endpoint.pop("deny_rules", None)
    elif rest and roll < 0.09:
        endpoint.update(rng.choice(CREDENTIALS))
    elif roll < 0.12:
        endpoint["tls"] = "skip"
        endpoint.pop("deny_rules", None)
    elif not rest and endpoint.get("protocol") is None and roll < 0.15:
        if rng.random() < 0.5:
            endpoint["access"] = rng.choice(PRESETS)
        else:
            endpoint["rules"] = [{"allow": matcher(rng, deny=False)}]
    if port_class.allowed_ips and rng.random() < 0.12 and endpoint.get("protocol") != "mcp":
        endpoint.pop("host", None)


def pick_host(rng: random.Random, kind: HostKind) -> str:
    if kind == "any":
        kind = rng.choice(("exact", "wildcard"))
    if kind == "wildcard":
        return rng.choice(v.WILDCARD_HOSTS)
    roll = rng.random()
    if roll < 0.14:
        return rng.choice(v.GATEWAY_HOSTS)
    if roll < 0.26:
        return rng.choice(v.IPV4_LITERAL_HOSTS)
    return rng.choice(v.EXACT_HOSTS)


def query_map(rng: random.Random) -> dict[str, str]:
    keys = rng.sample(v.QUERY_KEYS, rng.choice((1, 1, 2)))
    return {key: rng.choice((*v.QUERY_VALUES, "*", "*")) for key in keys}


def matcher(rng: random.Random, *, deny: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"method": rng.choice(v.METHODS)}
    if deny or rng.random() < 0.95:
        result["path"] = rng.choice(v.RULE_PATHS)
    if rng.random() < (0.3 if deny else 0.25):
        result["query"] = query_map(rng)
    return result


def rest_fields(rng: random.Random, endpoint: Document) -> None:
    endpoint["protocol"] = rng.choice(("rest", "rest", "rest", "REST"))
    endpoint["enforcement"] = "enforce"
    if rng.random() < 0.2:
        endpoint["path"] = rng.choice(v.SELECTOR_PATHS)
    if rng.random() < 0.3:
        endpoint["access"] = rng.choice(PRESETS)
    else:
        endpoint["rules"] = [{"allow": matcher(rng, deny=False)} for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.25:
        endpoint["deny_rules"] = [matcher(rng, deny=True) for _ in range(rng.randint(1, 2))]


def set_ports(rng: random.Random, endpoint: Document, ports: tuple[int, ...]) -> None:
    chosen = sorted(rng.sample(ports, rng.randint(1, len(ports))))
    endpoint.pop("port", None)
    endpoint.pop("ports", None)
    if len(chosen) == 1 and rng.random() < 0.75:
        endpoint["port"] = chosen[0]
    else:
        endpoint["ports"] = chosen


def endpoint(rng: random.Random, port_class: PortClass) -> Document:
    host = pick_host(rng, port_class.hosts)
    result: Document = {"host": host}
    set_ports(rng, result, port_class.ports)
    if port_class.allowed_ips:
        result["allowed_ips"] = list(port_class.allowed_ips)
    if port_class.layer == "opaque":
        result.update(json.loads(port_class.config))
    elif port_class.layer == "rest":
        rest_fields(rng, result)
    elif rng.random() < 0.15 and host not in v.IPV4_LITERAL_HOSTS:
        result["protocol"] = "tcp"
    extend_endpoint(rng, result, port_class)
    return result


def overlapping_endpoint(rng: random.Random, existing: Document) -> Document:
    """An endpoint on the same port as ``existing`` whose host can match the same name:
    L4 beside REST, exact beside wildcard, or a different configuration."""
    ports = list(existing.get("ports") or [existing.get("port") or 443])
    host = existing.get("host") or rng.choice(v.EXACT_HOSTS)
    roll = rng.random()
    result: Document = {"port": rng.choice(ports)}
    if roll < 0.35:
        result["host"] = host  # L4 beside it
    elif roll < 0.7:
        wild = [w for w in v.WILDCARD_HOSTS if "example.com" in w or "github" in w]
        result["host"] = rng.choice(wild)
        if rng.random() < 0.5:
            result["protocol"] = "rest"
            result["enforcement"] = "enforce"
            result["access"] = rng.choice(PRESETS)
    else:
        result["host"] = host
        result.update(opaque_config(rng))
    if rng.random() < 0.25:
        result["allowed_ips"] = [rng.choice(v.ALLOWED_IPS)]
    return result


def binaries(rng: random.Random) -> list[dict[str, str]]:
    count = rng.choice((0, 1, 1, 2, 2, 3))
    pool = [*v.EXACT_BINARIES, *v.EXACT_BINARIES, *v.GLOB_BINARIES]
    chosen: list[str] = []
    for _ in range(count):
        binary = rng.choice(pool)
        if binary not in chosen:
            chosen.append(binary)
    return [{"path": b} for b in chosen]


def rule(rng: random.Random, plan: Plan) -> Document:
    result: Document = {
        "endpoints": [endpoint(rng, rng.choice(plan)) for _ in range(rng.choice((1, 1, 2, 3)))],
        "binaries": binaries(rng),
    }
    if rng.random() < 0.1:
        result["endpoints"].append(overlapping_endpoint(rng, rng.choice(result["endpoints"])))
    if rng.random() < 0.15:
        result["name"] = rng.choice(RULE_NAMES).replace("_", "-")
    return result


def fresh_key(doc: Document, rng: random.Random) -> str:
    rules = doc.setdefault("network_policies", {})
    base = rng.choice(RULE_NAMES)
    key, suffix = base, 2
    while key in rules:
        key, suffix = f"{base}_{suffix}", suffix + 1
    return key


def filesystem(rng: random.Random) -> Document | None:
    if rng.random() < 0.2:
        return None  # absent: the working directory is included
    section: Document = {}
    workdir = rng.random()
    if workdir < 0.4:
        section["include_workdir"] = True
    elif workdir < 0.7:
        section["include_workdir"] = False
    section["read_only"] = rng.sample(v.READ_ONLY_PATHS, rng.randint(0, 4))
    section["read_write"] = rng.sample(v.READ_WRITE_PATHS, rng.randint(0, 3))
    if rng.random() < 0.05:
        section["read_only"].append("/")
    return section


def process(rng: random.Random) -> Document | None:
    if rng.random() < 0.5:
        return None
    section: Document = {}
    for field in ("run_as_user", "run_as_group"):
        if rng.random() < 0.8:
            section[field] = rng.choice(v.IDENTITIES)
    return section


def landlock(rng: random.Random) -> Document | None:
    roll = rng.random()
    if roll < 0.4:
        return None
    if roll < 0.5:
        return {}
    return {"compatibility": rng.choice(("best_effort", "hard_requirement"))}


def policy_document(rng: random.Random, plan: Plan) -> Document:
    """A policy over ``plan``: filesystem, process, Landlock and 0-4 network rules."""
    doc: Document = {"version": 1}
    for key, section in (
        ("filesystem_policy", filesystem(rng)),
        ("landlock", landlock(rng)),
        ("process", process(rng)),
    ):
        if section is not None:
            doc[key] = section
    doc["network_policies"] = {}
    for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4))):
        doc["network_policies"][fresh_key(doc, rng)] = rule(rng, plan)
    if rng.random() < 0.1:
        doc["network_middlewares"] = middlewares(rng)
    return doc


def middlewares(rng: random.Random) -> Document:
    """One or two middleware entries selecting hosts (identical in derived candidates)."""
    found: Document = {}
    for order, name in enumerate(rng.sample(("redact", "audit_log", "dlp"), rng.randint(1, 2))):
        entry: Document = {"middleware": rng.choice(("openshell/regex", "corp/dlp"))}
        if order:  # distinct orders: the runtime refuses two middlewares with one order
            entry["order"] = order
        if rng.random() < 0.5:
            entry["on_error"] = rng.choice(("fail_closed", "fail_open"))
        include = rng.sample([*v.EXACT_HOSTS[:5], *v.WILDCARD_HOSTS[:4]], rng.randint(1, 2))
        entry["endpoints"] = {"include": include}
        if rng.random() < 0.3:
            entry["endpoints"]["exclude"] = [rng.choice(v.EXACT_HOSTS[:5])]
        if rng.random() < 0.3:
            entry["config"] = {"patterns": ["AKIA[0-9A-Z]{16}"]}
        found[name] = entry
    return found


def render(doc: Document, rng: random.Random | None = None) -> str:
    """YAML text (sometimes JSON, which the loader also reads)."""
    if rng is not None and rng.random() < 0.08:
        return json.dumps(doc, indent=2) + "\n"
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)

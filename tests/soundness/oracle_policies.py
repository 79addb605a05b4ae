"""Random policy pairs for the oracle campaign: a boundary and a candidate derived from it.

The candidate is the boundary with a few edits, most of which narrow the text (a path,
rule, endpoint or binary removed, a preset reduced), so that the prover often answers
``within_boundary``: exactly where the runtime's reading (Landlock off, baseline
paths, symlinked binaries, primary gids, refusals) can make a narrower text a wider
sandbox. Some edits widen or break the policy. Everything is drawn from ``rng``.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import yaml

FS_PATHS = (
    "/usr",
    "/lib",
    "/etc",
    "/tmp",
    "/tmp/",
    "/sandbox",
    "/var/log",
    "/proc",
    "/app",
    "/dev/urandom",
    "/dev/null",
    "/usr/bin",
    "/bin",
    "/work",
    "/etc/alt",
    "/data",
    "/opt/tools",
    "/home/agent",
)
BAD_FS_PATHS = ("tmp", "/tmp/../etc", "/usr/./lib")
HOSTS = ("api.example.com", "*.example.com", "github.com", "**.example.com", "api.github.com")
BINARIES = (
    "/usr/bin/curl",
    "/bin/curl",
    "/usr/bin/python3",
    "/usr/bin/python3.11",
    "/usr/bin/py",
    "/usr/bin/git",
    "/usr/bin/*",
    "/usr/**",
)
IDENTITIES = ("sandbox", "1000", "1001", "1002", "100")
BAD_IDENTITIES = ("agent", "root", "0")
#: Names of one thing an author may write: a link, its target, a merged-/usr alias.
ALIASES = (
    ("/usr/bin/curl", "/bin/curl"),
    ("/usr/bin/python3.11", "/usr/bin/python3", "/usr/bin/py"),
    ("/sandbox", "/work"),
    ("/tmp", "/etc/alt", "/tmp/"),
    ("api.example.com", "*.example.com", "**.example.com"),
)
PATHS = ("/**", "/repos/*", "/api/**", "/repos/*/issues")


def _rule(rng: random.Random) -> dict[str, Any]:
    allow: dict[str, Any] = {"method": rng.choice(("GET", "POST", "*", "get", "DELETE"))}
    if rng.random() < 0.9:
        allow["path"] = rng.choice(PATHS)
    if rng.random() < 0.15:
        allow["query"] = {"q": rng.choice(("a*", {"any": ["x", "y*"]}))}
    return {"allow": allow}


def _endpoint(rng: random.Random) -> dict[str, Any]:
    ep: dict[str, Any] = {"host": rng.choice(HOSTS)}
    ports = rng.choice(([443], [443], [80, 443], [8080]))
    if len(ports) == 1 and rng.random() < 0.5:
        ep["port"] = ports[0]
    else:
        ep["ports"] = ports
    kind = rng.choices(("l4", "rest", "tcp"), (4, 5, 1))[0]
    if kind == "tcp":
        ep["protocol"] = "tcp"
    elif kind == "rest":
        ep["protocol"] = "rest"
        if rng.random() < 0.5:
            ep["access"] = rng.choice(("read-only", "read-write", "full"))
        else:
            ep["rules"] = [_rule(rng) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.25:
            deny: dict[str, Any] = {"method": rng.choice(("DELETE", "POST", "*"))}
            if rng.random() < 0.8:
                deny["path"] = rng.choice(PATHS)
            ep["deny_rules"] = [deny]
        if rng.random() < 0.7:
            ep["enforcement"] = rng.choice(("enforce", "enforce", "audit"))
        if rng.random() < 0.15:
            ep["path"] = rng.choice(("/api/**", "/repos/**"))
    return ep


def _identity(rng: random.Random) -> str:
    return rng.choice(BAD_IDENTITIES if rng.random() < 0.05 else IDENTITIES)


def random_policy(rng: random.Random) -> dict[str, Any]:
    policy: dict[str, Any] = {"version": 1}
    if rng.random() < 0.85:
        fs: dict[str, Any] = {}
        if rng.random() < 0.7:
            fs["include_workdir"] = rng.random() < 0.6
        fs["read_only"] = rng.sample(FS_PATHS, rng.randint(0, 5))
        fs["read_write"] = rng.sample(FS_PATHS, rng.randint(0, 3))
        if rng.random() < 0.03:
            fs["read_write"].append(rng.choice(BAD_FS_PATHS))
        policy["filesystem_policy"] = fs
    if rng.random() < 0.5:
        policy["landlock"] = {
            "compatibility": rng.choices(("best_effort", "hard_requirement", "strict"), (4, 4, 1))[
                0
            ]
        }
    if rng.random() < 0.6:
        process = {}
        if rng.random() < 0.7:
            process["run_as_user"] = _identity(rng)
        if rng.random() < 0.5:
            process["run_as_group"] = _identity(rng)
        policy["process"] = process
    if rng.random() < 0.6:
        policy["network_policies"] = {
            f"p{i}": {
                "endpoints": [_endpoint(rng) for _ in range(rng.randint(1, 2))],
                "binaries": [{"path": b} for b in rng.sample(BINARIES, rng.randint(1, 2))],
            }
            for i in range(rng.randint(1, 2))
        }
    if rng.random() < 0.02:
        policy["inference"] = {"routes": []}
    return policy


def _lists(policy: dict[str, Any]) -> list[list[Any]]:
    found = []
    fs = policy.get("filesystem_policy") or {}
    found += [fs[k] for k in ("read_only", "read_write") if fs.get(k)]
    for rule in (policy.get("network_policies") or {}).values():
        found += [rule[k] for k in ("endpoints", "binaries") if len(rule.get(k) or []) > 1]
        for ep in rule.get("endpoints") or []:
            if len(ep.get("rules") or []) > 1:
                found.append(ep["rules"])
    return found


def _alias(value: str, rng: random.Random) -> str:
    for group in ALIASES:
        if value in group:
            return rng.choice([v for v in group if v != value])
    return value


def _swap_alias(policy: dict[str, Any], rng: random.Random) -> None:
    """Rewrite one binary, path or host as another name of the same thing (or a
    wider host pattern)."""
    slots: list[tuple[Any, Any]] = []
    fs = policy.get("filesystem_policy") or {}
    for key in ("read_only", "read_write"):
        slots += [(fs[key], i) for i in range(len(fs.get(key) or []))]
    for rule in (policy.get("network_policies") or {}).values():
        slots += [(b, "path") for b in rule.get("binaries") or []]
        slots += [(e, "host") for e in rule.get("endpoints") or []]
    if slots:
        holder, key = rng.choice(slots)
        holder[key] = _alias(holder[key], rng)


def mutate(policy: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One edit of ``policy`` (in place); returns it."""
    if rng.random() < 0.2:
        _swap_alias(policy, rng)
        return policy
    choice = rng.random()
    lists = _lists(policy)
    if choice < 0.45 and lists:
        items = rng.choice(lists)
        items.pop(rng.randrange(len(items)))
    elif choice < 0.55 and policy.get("network_policies"):
        rules = policy["network_policies"]
        rules.pop(rng.choice(sorted(rules)))
        if not rules:
            policy.pop("network_policies")
    elif choice < 0.62:
        policy.pop(rng.choice(("filesystem_policy", "landlock", "process")), None)
    elif choice < 0.72:
        fs = policy.setdefault("filesystem_policy", {})
        fs["include_workdir"] = not fs.get("include_workdir", False)
    elif choice < 0.8:
        policy["process"] = {"run_as_user": _identity(rng)} if rng.random() < 0.5 else {}
    elif choice < 0.86:
        for rule in (policy.get("network_policies") or {}).values():
            for ep in rule.get("endpoints") or []:
                if ep.get("access") == "full":
                    ep["access"] = "read-only"
                elif "enforcement" in ep:
                    ep["enforcement"] = "audit" if ep["enforcement"] == "enforce" else "enforce"
    elif choice < 0.93:
        fs = policy.setdefault("filesystem_policy", {})
        fs.setdefault("read_only", []).append(rng.choice(FS_PATHS))
    else:
        policy["landlock"] = {"compatibility": rng.choice(("best_effort", "hard_requirement"))}
    return policy


def random_pair(rng: random.Random) -> tuple[str, str]:
    """(candidate, boundary) YAML texts."""
    boundary = random_policy(rng)
    candidate = copy.deepcopy(boundary)
    for _ in range(rng.randint(1, 3)):
        mutate(candidate, rng)
    return dump(candidate), dump(boundary)


def dump(policy: dict[str, Any]) -> str:
    return yaml.safe_dump(policy, sort_keys=False, default_flow_style=None)

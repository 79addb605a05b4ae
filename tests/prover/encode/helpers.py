"""Compact constructors of normalised policies for the encoding and solver tests."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

import z3

from prover.encode.action import SymbolicAction
from prover.encode.logic import text_value
from prover.policy.model import (
    PRESET_METHODS,
    AccessPreset,
    Endpoint,
    Filesystem,
    HttpRule,
    Layer,
    NetworkAction,
    Policy,
    QueryMatcher,
    Rule,
)

FS = Filesystem(include_workdir=False, read_only=(), read_write=())


def http(method: str, path: str = "", query: dict[str, str | None] | None = None) -> HttpRule:
    """An allow/deny matcher; a query value ``None`` is the ``*`` matcher."""
    matchers = tuple(QueryMatcher(k, v) for k, v in (query or {}).items())
    return HttpRule(method=method, path=path, query=matchers)


def endpoint(
    host: str,
    ports: Iterable[int] = (443,),
    *,
    layer: Layer = "l4",
    path: str = "",
    allowed_ips: Iterable[str] = (),
    access: AccessPreset | None = None,
    allow: Iterable[HttpRule] = (),
    deny: Iterable[HttpRule] = (),
) -> Endpoint:
    raw = tuple(allowed_ips)
    allow_rules = tuple(allow)
    if access is not None:
        allow_rules = tuple(http(m) for m in PRESET_METHODS[access])
    return Endpoint(
        index=0,
        host=host.lower(),
        ports=tuple(ports),
        layer=layer,
        path=path,
        allowed_ips=tuple(ipaddress.ip_network(r, strict=False) for r in raw),
        allowed_ips_raw=raw,
        access=access,
        allow_rules=tuple(
            HttpRule(r.method, r.path, r.query, index=i) for i, r in enumerate(allow_rules)
        ),
        deny_rules=tuple(HttpRule(r.method, r.path, r.query, index=i) for i, r in enumerate(deny)),
    )


def rest(host: str, ports: Iterable[int] = (443,), **kwargs: object) -> Endpoint:
    return endpoint(host, ports, layer="rest", **kwargs)  # type: ignore[arg-type]


def rule(key: str, endpoints: Iterable[Endpoint], binaries: Iterable[str] = ()) -> Rule:
    eps = tuple(
        Endpoint(
            index=i,
            host=e.host,
            ports=e.ports,
            layer=e.layer,
            path=e.path,
            allowed_ips=e.allowed_ips,
            allowed_ips_raw=e.allowed_ips_raw,
            access=e.access,
            allow_rules=e.allow_rules,
            deny_rules=e.deny_rules,
        )
        for i, e in enumerate(endpoints)
    )
    return Rule(key=key, name=key, binaries=tuple(binaries), endpoints=eps)


def policy(*rules: Rule) -> Policy:
    return Policy(filesystem=FS, rules=tuple(rules))


def single(*endpoints: Endpoint, binaries: Iterable[str] = ("/usr/bin/curl",)) -> Policy:
    """A policy with one rule ``r`` holding ``endpoints``."""
    return policy(rule("r", endpoints, binaries))


# ---------------------------------------------------------------------------------------
# Evaluating symbolic terms on one concrete action


def fix_action(action: SymbolicAction, concrete: NetworkAction) -> list[z3.BoolRef]:
    """Constraints that give every field of ``action`` the value of ``concrete``."""
    ctx = action.ctx
    address = concrete.destination_ip
    fixed = [
        action.host == text_value(concrete.host, ctx),
        action.port == concrete.port,
        action.is_rest == z3.BoolVal(concrete.protocol == "rest", ctx),
        action.method == text_value(concrete.method or "GET", ctx),
        action.path == text_value(concrete.path or "/", ctx),
        action.ip.bits == z3.BitVecVal(int(address), 128, ctx),
        action.ip.is_v6 == z3.BoolVal(address.version == 6, ctx),
        action.trusted_gateway == z3.BoolVal(concrete.trusted_gateway, ctx),
        action.binary == text_value(concrete.binary or "", ctx),
        action.ancestor_binary == text_value(concrete.ancestor_binary or "", ctx),
    ]
    values = dict(concrete.query) if concrete.protocol == "rest" else {}
    for key, classes in action.query.keys.items():
        present = values.get(key, ())
        for literal, flag in classes.literals.items():
            fixed.append(flag == z3.BoolVal(literal in present, ctx))
        others = [v for v in present if v not in classes.literals]
        fixed.append(classes.other_plain == z3.BoolVal(any("." not in v for v in others), ctx))
        fixed.append(classes.other_dotted == z3.BoolVal(any("." in v for v in others), ctx))
    return fixed


def holds(term: z3.BoolRef, action: SymbolicAction, concrete: NetworkAction) -> bool:
    """The truth value of ``term`` when ``action`` is ``concrete`` (all fields fixed)."""
    solver = z3.Solver(ctx=action.ctx)
    solver.add(*fix_action(action, concrete))
    solver.add(term)
    result = solver.check()
    assert result != z3.unknown, solver.reason_unknown()
    return result == z3.sat

"""Small builders of normalised policies and network actions for the evaluator tests."""

from __future__ import annotations

import ipaddress
from dataclasses import replace

from prover.policy.model import (
    PRESET_METHODS,
    AccessPreset,
    Endpoint,
    Filesystem,
    HttpRule,
    NetworkAction,
    Policy,
    QueryMatcher,
    Rule,
)

HOST = "api.example.com"
CURL = "/usr/bin/curl"


def allow(method: str, path: str = "", index: int = 0, **query: str | None) -> HttpRule:
    return HttpRule(method, path, tuple(QueryMatcher(k, v) for k, v in query.items()), index)


def l4(host: str = HOST, ports: tuple[int, ...] = (443,), index: int = 0) -> Endpoint:
    return Endpoint(index=index, host=host, ports=ports, layer="l4")


def rest(
    *rules: HttpRule,
    host: str = HOST,
    ports: tuple[int, ...] = (443,),
    path: str = "",
    deny: tuple[HttpRule, ...] = (),
    index: int = 0,
) -> Endpoint:
    return Endpoint(
        index=index,
        host=host,
        ports=ports,
        layer="rest",
        path=path,
        allow_rules=rules,
        deny_rules=deny,
    )


def preset(access: AccessPreset, path: str = "", index: int = 0) -> Endpoint:
    rules = tuple(HttpRule(m, "", (), i) for i, m in enumerate(PRESET_METHODS[access]))
    return replace(rest(*rules, path=path, index=index), access=access)


def rule(key: str, *endpoints: Endpoint, binaries: tuple[str, ...] = (CURL,)) -> Rule:
    return Rule(key=key, name=key, binaries=binaries, endpoints=endpoints)


def policy(*rules: Rule) -> Policy:
    return Policy(filesystem=Filesystem(False, (), ()), rules=rules)


def req(
    method: str = "GET",
    path: str = "/",
    *,
    host: str = HOST,
    port: int = 443,
    ip: str = "8.8.8.8",
    query: dict[str, tuple[str, ...]] | None = None,
    binary: str | None = None,
    ancestor: str | None = None,
    trusted: bool = False,
) -> NetworkAction:
    identity = binary is not None
    return NetworkAction(
        host=host,
        port=port,
        destination_ip=ipaddress.ip_address(ip),
        protocol="rest",
        method=method,
        path=path,
        query=tuple((query or {}).items()),
        binary=binary,
        ancestor_binary=(ancestor or binary) if identity else None,
        binary_identity_required=identity,
        trusted_gateway=trusted,
    )


def conn(
    *,
    host: str = HOST,
    port: int = 443,
    ip: str = "8.8.8.8",
    binary: str | None = None,
    ancestor: str | None = None,
) -> NetworkAction:
    identity = binary is not None
    return NetworkAction(
        host=host,
        port=port,
        destination_ip=ipaddress.ip_address(ip),
        binary=binary,
        ancestor_binary=(ancestor or binary) if identity else None,
        binary_identity_required=identity,
    )

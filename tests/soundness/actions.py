"""Concrete actions sampled from what a candidate policy names, with edge values.

For a ``within_boundary`` verdict the campaign needs actions the candidate *allows*:
they are built from the candidate's own endpoints, rules, binaries and paths (wildcards
filled with empty, dotted and non-ASCII segments), mixed with the boundary's literals
(so its narrower paths, query keys and binaries are exercised) and with the edge values
of ``tests.soundness.vocabulary``: IPv4-mapped IPv6, private and always-blocked
addresses, control ports, gateway aliases with ``trusted_gateway`` on and off, ``HEAD``
for ``GET``, dotted query values, ancestor binaries, both identity modes. Only actions
the candidate allows (by the concrete evaluator) are kept.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterable, Iterator
from dataclasses import replace

from prover.concrete import allows
from prover.concrete.canonical import is_action_domain_binary, is_action_domain_path
from prover.concrete.glob import host_matches, path_matches
from prover.concrete.ip import endpoint_ip_ok
from prover.concrete.witness import WORKDIR
from prover.policy.model import (
    PRESET_METHODS,
    Endpoint,
    FilesystemAction,
    HttpRule,
    IPAddress,
    IPNetwork,
    NetworkAction,
    Policy,
    Rule,
)
from tests.soundness import vocabulary as v

HOST_FILLS: tuple[str, ...] = ("", "a", "api", "x-y", "a_b", "é")
DEEP_FILLS: tuple[str, ...] = ("", "a", "a.b", "deep.api")
BINARY_FILLS: tuple[str, ...] = ("", "curl", "python3", "a")
DEEP_BINARY_FILLS: tuple[str, ...] = ("", "bin/python3", "a", "x/y/z")


def _fill(pattern: str, star: tuple[str, ...], deep: tuple[str, ...], rng: random.Random) -> str:
    """Replace every ``**`` with a ``deep`` fill and every other ``*`` with a ``star``."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            out.append(rng.choice(deep))
            index += 2
        elif pattern[index] == "*":
            out.append(rng.choice(star))
            index += 1
        else:
            out.append(pattern[index])
            index += 1
    return "".join(out)


def host_instances(pattern: str, rng: random.Random, extra: Iterable[str]) -> list[str]:
    """Names the host pattern matches: fills, upper case, gateway aliases, ``extra``."""
    if "*" not in pattern:
        found = [pattern, pattern.upper()]
    else:
        found = [_fill(pattern, HOST_FILLS, DEEP_FILLS, rng) for _ in range(6)]
    found += [h for h in (*v.GATEWAY_HOSTS, *extra) if host_matches(pattern, h)]
    return list(dict.fromkeys(found))


def _path_segment(segment: str, rng: random.Random) -> list[str]:
    if segment == "**":
        return [rng.choice(v.SEGMENTS) for _ in range(rng.choice((0, 1, 1, 2)))]
    return [_fill(segment, v.SEGMENTS, v.SEGMENTS, rng)]


def path_instance(pattern: str, rng: random.Random) -> str:
    """One path the glob (probably) matches; ``""``/``**`` yield ordinary paths."""
    if pattern in ("", "**"):
        return rng.choice(("/", "/a", "/v1/models", "/x.y/z", "/é", "/v1/"))
    segments = pattern.split("/")
    out: list[str] = []
    for position, segment in enumerate(segments):
        filled = _path_segment(segment, rng)
        if not filled and segment == "**" and position == len(segments) - 1:
            filled = [""]  # a last "**" matches the empty rest: "/a/**" -> "/a/"
        out.extend(filled)
    return "/".join(out)


def binary_instances(patterns: Iterable[str], rng: random.Random) -> list[str]:
    found = [_fill(p, BINARY_FILLS, DEEP_BINARY_FILLS, rng) for p in patterns]
    return [b for b in dict.fromkeys(found) if is_action_domain_binary(b)]


def _ips(candidate: Policy, boundary: Policy) -> list[IPAddress]:
    """Edge addresses, plus the first, last, a middle, the mapped form and the neighbour
    just outside of every ``allowed_ips`` network and every IPv4 literal host."""
    found: list[IPAddress] = [ipaddress.ip_address(a) for a in v.EDGE_IPS]
    endpoints = [e for policy in (candidate, boundary) for r in policy.rules for e in r.endpoints]
    for endpoint in endpoints:
        if endpoint.ipv4_literal is not None:
            found.append(endpoint.ipv4_literal)
        for net in endpoint.allowed_ips:
            found.extend(_around(net))
    return list(dict.fromkeys(found))


def _around(net: IPNetwork) -> list[IPAddress]:
    """First, last, middle, the neighbours just outside, and the mapped first address."""
    first, last = int(net.network_address), int(net.broadcast_address)
    family = ipaddress.IPv6Address if net.version == 6 else ipaddress.IPv4Address
    found: list[IPAddress] = [
        family(value)
        for value in (first, last, (first + last) // 2, last + 1, first - 1)
        if 0 <= value < 2**net.max_prefixlen
    ]
    if net.version == 4:
        found.append(ipaddress.IPv6Address(f"::ffff:{net.network_address}"))
    return found


def _all_rules(policy: Policy) -> list[HttpRule]:
    return [
        r for rule in policy.rules for e in rule.endpoints for r in (*e.allow_rules, *e.deny_rules)
    ]


class _Sampler:
    """Builds one random action for a (rule, endpoint) of the candidate at a time; the
    value pools (addresses, hosts, binaries, the boundary's rules) are computed once."""

    def __init__(self, candidate: Policy, boundary: Policy, rng: random.Random) -> None:
        self.candidate, self.boundary, self.rng = candidate, boundary, rng
        self.ips = _ips(candidate, boundary)
        self.boundary_hosts = [e.host for r in boundary.rules for e in r.endpoints]
        self.boundary_hosts += [
            h for r in boundary.rules for e in r.endpoints for h in host_instances(e.host, rng, ())
        ]
        self.boundary_rules = _all_rules(boundary) + _all_rules(candidate)
        self.binaries = binary_instances(
            [
                *v.EXACT_BINARIES,
                *(b for p in (candidate, boundary) for r in p.rules for b in r.binaries),
            ],
            rng,
        )
        self._hosts: dict[tuple[str, int], list[str]] = {}
        self._own_binaries: dict[str, list[str]] = {}
        self._ip_cache: dict[tuple[str, int, str, int, bool], list[IPAddress]] = {}

    def _fitting_ips(
        self, rule: Rule, endpoint: Endpoint, host: str, port: int, gateway: bool
    ) -> list[IPAddress]:
        """Mostly addresses the endpoint accepts for this connection, sometimes any."""
        if self.rng.random() >= 0.85:
            return self.ips
        key = (rule.key, endpoint.index, host, port, gateway)
        fitting = self._ip_cache.get(key)
        if fitting is None:
            fitting = [
                ip
                for ip in self.ips
                if endpoint_ip_ok(
                    endpoint,
                    NetworkAction(host=host, port=port, destination_ip=ip, trusted_gateway=gateway),
                )
            ] or self.ips
            self._ip_cache[key] = fitting
        return fitting

    def _method(self, rule: HttpRule | None, endpoint: Endpoint) -> str:
        rng = self.rng
        if rule is None or rule.method == "*" or rng.random() < 0.15:
            pool = [*v.ACTION_METHODS, *(r.method.upper() for r in self.boundary_rules)]
            if endpoint.access is not None:
                pool += list(PRESET_METHODS[endpoint.access])
            return rng.choice(pool)
        method = rule.method.upper()
        return "HEAD" if method == "GET" and rng.random() < 0.3 else method

    def _path(self, rule: HttpRule | None, endpoint: Endpoint) -> str:
        """A path from the rule, the endpoint selector or a boundary rule; a few tries
        for one the endpoint selector also matches."""
        rng = self.rng
        path = "/"
        for _ in range(3):
            roll = rng.random()
            if roll < 0.15 and self.boundary_rules:
                pattern = rng.choice(self.boundary_rules).path
            elif roll < 0.3 or rule is None:
                pattern = endpoint.path
            else:
                pattern = rule.path
            path = path_instance(pattern, rng)
            if path_matches(endpoint.path, path):
                break
        return path

    def _query(self, rule: HttpRule | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
        rng = self.rng
        matchers = list(rule.query) if rule is not None else []
        if rng.random() < 0.3 and self.boundary_rules:
            matchers += list(rng.choice(self.boundary_rules).query)
        query: dict[str, list[str]] = {}
        for m in matchers:
            value = m.value if m.value is not None else rng.choice(v.ACTION_QUERY_VALUES)
            query.setdefault(m.key, []).append(value)
            if rng.random() < 0.15:
                query[m.key].append(rng.choice((value, *v.ACTION_QUERY_VALUES)))
        if rng.random() < 0.2:
            query.setdefault(rng.choice(v.QUERY_KEYS), []).append(rng.choice(v.ACTION_QUERY_VALUES))
        return tuple((k, tuple(vals)) for k, vals in query.items())

    def _identity(self, rule: Rule) -> tuple[str | None, str | None]:
        rng = self.rng
        own = self._own_binaries.get(rule.key)
        if own is None:
            own = binary_instances([*rule.binaries, *rule.binaries], rng) or self.binaries
            self._own_binaries[rule.key] = own
        mine, other = rng.choice(own), rng.choice([*self.binaries, *v.ANCESTOR_BINARIES])
        if rng.random() < 0.3:
            return other, mine  # granted through the ancestor
        return mine, (mine if rng.random() < 0.3 else other)

    def action(self, rule: Rule, endpoint: Endpoint, identity: bool) -> NetworkAction | None:
        rng = self.rng
        hosts = self._hosts.get((rule.key, endpoint.index))
        if hosts is None:
            hosts = host_instances(endpoint.host, rng, self.boundary_hosts)
            self._hosts[(rule.key, endpoint.index)] = hosts
        host = rng.choice(hosts)
        port = rng.choice(endpoint.ports) if endpoint.ports else 443
        gateway = rng.random() < 0.35
        binary, ancestor = self._identity(rule) if identity else (None, None)
        rest = endpoint.layer == "rest" or rng.random() < 0.3
        allow = rng.choice(endpoint.allow_rules) if endpoint.allow_rules else None
        ip = rng.choice(self._fitting_ips(rule, endpoint, host, port, gateway))
        if not rest:
            return NetworkAction(
                host=host,
                port=port,
                destination_ip=ip,
                binary=binary,
                ancestor_binary=ancestor,
                binary_identity_required=identity,
                trusted_gateway=gateway,
            )
        path = self._path(allow, endpoint)
        if not is_action_domain_path(path):
            return None
        return NetworkAction(
            host=host,
            port=port,
            destination_ip=ip,
            protocol="rest",
            method=self._method(allow, endpoint),
            path=path,
            query=self._query(allow),
            binary=binary,
            ancestor_binary=ancestor,
            binary_identity_required=identity,
            trusted_gateway=gateway,
        )


def network_actions(
    candidate: Policy, boundary: Policy, rng: random.Random, *, tries: int = 240, sweeps: int = 8
) -> list[NetworkAction]:
    """Actions the candidate allows: ``tries`` random samples, then the first kept action
    of up to ``sweeps`` endpoints varied field by field over the edge values."""
    pairs = [(r, e) for r in candidate.rules for e in r.endpoints]
    if not pairs:
        return []
    sampler = _Sampler(candidate, boundary, rng)
    kept: dict[NetworkAction, None] = {}
    first_per_endpoint: dict[tuple[str, int], NetworkAction] = {}
    for attempt in range(tries):
        rule, endpoint = pairs[attempt % len(pairs)]
        action = sampler.action(rule, endpoint, identity=rng.random() < 0.5)
        if action is not None and allows(candidate, action):
            kept[action] = None
            first_per_endpoint.setdefault((rule.key, endpoint.index), action)
    seeds = list(first_per_endpoint.values())
    for action in rng.sample(seeds, min(sweeps, len(seeds))):
        for variant in variants(action, sampler.ips):
            if variant not in kept and allows(candidate, variant):
                kept[variant] = None
    return list(kept)


def variants(action: NetworkAction, ips: list[IPAddress]) -> Iterator[NetworkAction]:
    """The action with one field swept over its edge values: every address, the other
    ``trusted_gateway``, each gateway alias, upper case, ``HEAD`` for ``GET``, the other
    identity mode and the binary moved to the ancestor."""
    for ip in ips:
        yield replace(action, destination_ip=ip)
    yield replace(action, trusted_gateway=not action.trusted_gateway)
    for host in (*v.GATEWAY_HOSTS, action.host.upper()):
        yield replace(action, host=host, trusted_gateway=True)
        yield replace(action, host=host, trusted_gateway=False)
    if action.method == "GET":
        yield replace(action, method="HEAD")
    if action.binary_identity_required:
        yield replace(action, binary=None, ancestor_binary=None, binary_identity_required=False)
        yield replace(action, binary=v.ANCESTOR_BINARIES[0], ancestor_binary=action.binary)


def filesystem_actions(candidate: Policy) -> list[FilesystemAction]:
    """Every read and write the candidate grants, its workdir and, where it grants ``/``,
    paths no policy lists."""
    fs = candidate.filesystem
    paths = [*fs.read_only, *fs.read_write, WORKDIR, *v.OTHER_PATHS, *v.READ_WRITE_PATHS]
    found = [
        FilesystemAction(access=access, path=path)
        for path in dict.fromkeys(paths)
        for access in ("read", "write")
    ]
    return [a for a in found if allows(candidate, a, workdir=WORKDIR)]

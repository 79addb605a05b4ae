"""Concrete actions built from a policy's own endpoints, with edge values.

Used to test "within" answers: every sampled action the candidate allows must be allowed
by the boundary too. The samples aim at the edges of each selector: wildcards filled with
empty, one-character and multi-label text, both ends of each CIDR, private, link-local
and mapped addresses, the gateway aliases, GET/HEAD, dotted and dot-free query values.
"""

from __future__ import annotations

import ipaddress
import itertools

from prover.concrete.ip import GATEWAY_ALIASES
from prover.policy.model import Endpoint, HttpRule, IPAddress, NetworkAction, Policy

FALLBACK_IPS = ("8.8.8.8", "10.0.0.1", "2001:db8::1", "169.254.1.1", "::ffff:8.8.8.8")


def _fill(pattern: str, star: str, double: str) -> str:
    return pattern.replace("**", "\0").replace("*", star).replace("\0", double)


def hosts(endpoint: Endpoint) -> list[str]:
    out = {_fill(endpoint.host, "a", "a"), _fill(endpoint.host, "", "a.b")}
    out.add(_fill(endpoint.host, "x-y", ""))
    if "*" in endpoint.host:
        out.update(GATEWAY_ALIASES)
    return sorted(out)


def addresses(endpoint: Endpoint) -> list[IPAddress]:
    out: list[IPAddress] = [ipaddress.ip_address(a) for a in FALLBACK_IPS]
    for network in endpoint.allowed_ips:
        out.append(network.network_address)
        out.append(network.broadcast_address)
    try:
        out.append(ipaddress.ip_address(endpoint.host))
    except ValueError:
        pass
    return out


def _paths(pattern: str) -> list[str]:
    if pattern in ("", "**"):
        return ["/", "/a/b"]
    return sorted({_fill(pattern, "a", "a/b"), _fill(pattern, "", "")} - {""})


def _methods(rule: HttpRule) -> list[str]:
    if rule.method == "*":
        return ["GET", "PATCH"]
    upper = rule.method.upper()
    return ["GET", "HEAD"] if upper == "GET" else [upper]


def _queries(rule: HttpRule) -> list[tuple[tuple[str, tuple[str, ...]], ...]]:
    plain = tuple((m.key, (m.value if m.value is not None else "",)) for m in rule.query)
    other = tuple((m.key, (m.value if m.value is not None else "v",)) for m in rule.query)
    dotted = tuple((m.key, ("x.y",)) for m in rule.query)
    return sorted({plain, other, dotted, ()})


def requests(endpoint: Endpoint) -> list[tuple[str, str | None, str | None, tuple]]:
    """(protocol, method, path, query) combinations for one endpoint."""
    out: list[tuple[str, str | None, str | None, tuple]] = [("l4", None, None, ())]
    if endpoint.layer == "l4":
        out.append(("rest", "GET", "/", ()))
        return out
    for rule in (*endpoint.allow_rules, *endpoint.deny_rules):
        for method, path, query in itertools.product(
            _methods(rule), _paths(rule.path or endpoint.path), _queries(rule)
        ):
            out.append(("rest", method, path, query))
    return out


def binaries(patterns: tuple[str, ...]) -> list[str]:
    out = {"/usr/bin/other"}
    for pattern in patterns:
        out.add(_fill(pattern, "a", "a/b"))
    return sorted(b for b in out if b.startswith("/"))


def candidate_actions(
    policy: Policy, identity: bool, per_endpoint: int = 60
) -> list[NetworkAction]:
    """Up to ``per_endpoint`` actions for every endpoint of ``policy``, spread evenly over
    the combinations of its edge values."""
    out: list[NetworkAction] = []
    for rule in policy.rules:
        bins: list[str | None] = list(binaries(rule.binaries)) if identity else [None]
        for endpoint in rule.endpoints:
            combos = list(
                itertools.product(
                    hosts(endpoint),
                    endpoint.ports,
                    addresses(endpoint),
                    (False, True),
                    requests(endpoint),
                    bins,
                )
            )
            stride = max(1, len(combos) // per_endpoint)
            for host, port, address, trusted, request, binary in combos[::stride]:
                protocol, method, path, query = request
                out.append(
                    NetworkAction(
                        host=host,
                        port=port,
                        destination_ip=address,
                        protocol=protocol,  # type: ignore[arg-type]
                        method=method,
                        path=path,
                        query=query,
                        binary=binary,
                        ancestor_binary=binary,
                        binary_identity_required=identity,
                        trusted_gateway=trusted,
                    )
                )
    return out

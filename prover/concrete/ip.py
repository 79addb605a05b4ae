"""The destination-address model of spec §9.4: which IP a connection may reach.

Addresses are compared family-strictly, as the reference does (its symbolic address
carries an ``is_v6`` flag that must equal the network's): an IPv4-mapped IPv6 address
``::ffff:a.b.c.d`` is an IPv6 address, so it is *not* inside an IPv4 ``allowed_ips``
CIDR and does not equal an IPv4 literal host. The always-blocked and internal range
lists, however, include the IPv4-mapped forms of their IPv4 ranges, so a mapped address
is classified (hard-blocked / internal) like the IPv4 address it carries.

Hostnames are never resolved: the destination IP of an action is whatever the caller
says the name resolved to.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from prover.concrete.glob import host_matches
from prover.policy.model import Endpoint, IPAddress, IPNetwork, NetworkAction

_HARD_V4 = ("127.0.0.0/8", "169.254.0.0/16", "0.0.0.0/32")
_HARD_V6 = ("::/128", "::1/128", "fe80::/10")
_INTERNAL_V4 = (
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "192.0.2.0/24",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "255.255.255.255/32",
    "100.64.0.0/10",
    "192.0.0.0/24",
    "198.18.0.0/15",
)
_INTERNAL_V6 = ("fc00::/7",)

CONTROL_PORTS: frozenset[int] = frozenset({2379, 2380, 6443, 10250, 10255})
GATEWAY_ALIASES: tuple[str, ...] = (
    "host.openshell.internal",
    "host.containers.internal",
    "host.docker.internal",
)
METADATA_ADDRESS = ipaddress.IPv4Address("169.254.169.254")


def mapped_network(network: ipaddress.IPv4Network) -> ipaddress.IPv6Network:
    """The IPv4-mapped IPv6 form (``::ffff:0:0/96`` + the v4 prefix) of an IPv4 CIDR."""
    base = int(ipaddress.IPv6Address("::ffff:0.0.0.0")) | int(network.network_address)
    return ipaddress.IPv6Network((base, 96 + network.prefixlen))


def _networks(raw: Iterable[str]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(value) for value in raw)


def _with_mapped(v4: Iterable[str]) -> tuple[IPNetwork, ...]:
    networks = _networks(v4)
    return networks + tuple(
        mapped_network(n) for n in networks if isinstance(n, ipaddress.IPv4Network)
    )


HARD_BLOCKED: tuple[IPNetwork, ...] = _with_mapped(_HARD_V4) + _networks(_HARD_V6)
INTERNAL: tuple[IPNetwork, ...] = (
    HARD_BLOCKED + _with_mapped(_INTERNAL_V4) + _networks(_INTERNAL_V6)
)
_LINK_LOCAL: tuple[IPNetwork, ...] = _with_mapped(("169.254.0.0/16",)) + _networks(("fe80::/10",))
_METADATA: tuple[IPNetwork, ...] = _with_mapped(("169.254.169.254/32",))


def in_network(address: IPAddress, network: IPNetwork) -> bool:
    """Family-strict membership (a v6 address is never inside a v4 network)."""
    return address.version == network.version and (int(address) & int(network.netmask)) == int(
        network.network_address
    )


def same_address(left: IPAddress, right: IPAddress) -> bool:
    """Family-strict equality of two addresses (ignores an IPv6 scope id)."""
    return left.version == right.version and int(left) == int(right)


def _in_any(address: IPAddress, networks: Iterable[IPNetwork]) -> bool:
    return any(in_network(address, network) for network in networks)


def is_hard_blocked(address: IPAddress) -> bool:
    """Always blocked by the runtime: loopback, link-local, unspecified (+ mapped)."""
    return _in_any(address, HARD_BLOCKED)


def is_internal(address: IPAddress) -> bool:
    """Hard-blocked, private, shared, documentation, benchmark, broadcast or ULA."""
    return _in_any(address, INTERNAL)


def is_control_port(port: int) -> bool:
    """Ports of the cluster control plane (etcd, API server, kubelet)."""
    return port in CONTROL_PORTS


def is_gateway_alias(host: str) -> bool:
    """Whether an action host names the trusted gateway (case-insensitive)."""
    return host.lower() in GATEWAY_ALIASES


def endpoint_can_match_gateway(endpoint: Endpoint) -> bool:
    """Whether the endpoint host glob matches at least one gateway alias."""
    return any(host_matches(endpoint.host, alias) for alias in GATEWAY_ALIASES)


def host_ip_literal(host: str) -> IPAddress | None:
    """The endpoint host as an IP address when it is a literal, else ``None``."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def gateway_address_ok(address: IPAddress, port: int) -> bool:
    """A trusted gateway: link-local (+ mapped) except the metadata address."""
    return (
        _in_any(address, _LINK_LOCAL)
        and not _in_any(address, _METADATA)
        and not is_control_port(port)
    )


def ordinary_address_ok(endpoint: Endpoint, address: IPAddress, port: int) -> bool:
    """The address rule of an endpoint when the gateway rule does not apply."""
    ordinary_checks = not is_hard_blocked(address) and not is_control_port(port)
    if endpoint.allowed_ips:
        return _in_any(address, endpoint.allowed_ips) and ordinary_checks
    literal = host_ip_literal(endpoint.host)
    if literal is not None:
        return same_address(address, literal) and ordinary_checks
    if endpoint.host_is_wildcard:
        return not is_internal(address)
    return ordinary_checks


def endpoint_ip_ok(endpoint: Endpoint, action: NetworkAction) -> bool:
    """The per-endpoint destination-address rule of spec §9.4 for ``action``.

    Connection matching (port and host) is *not* part of this; callers combine it.
    """
    address = action.destination_ip
    if (
        action.trusted_gateway
        and is_gateway_alias(action.host)
        and endpoint_can_match_gateway(endpoint)
    ):
        allowed = gateway_address_ok(address, action.port)
    else:
        allowed = ordinary_address_ok(endpoint, address, action.port)
    # A literal destination cannot resolve to another address, allowed_ips or not.
    literal = host_ip_literal(endpoint.host)
    return allowed and (literal is None or same_address(address, literal))

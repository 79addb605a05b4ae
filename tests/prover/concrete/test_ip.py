"""The destination-IP model of spec §9.4."""

from __future__ import annotations

import ipaddress

import pytest

from prover.concrete.ip import (
    endpoint_ip_ok,
    is_control_port,
    is_gateway_alias,
    is_hard_blocked,
    is_internal,
)
from prover.policy.model import Endpoint, NetworkAction

HARD = [
    "127.0.0.1",
    "127.255.255.255",
    "169.254.0.1",
    "169.254.169.254",
    "0.0.0.0",
    "::",
    "::1",
    "fe80::1",
    "febf:ffff::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.1.1",
    "::ffff:0.0.0.0",
]
INTERNAL_NOT_HARD = [
    "10.0.0.1",
    "10.255.255.255",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "192.0.2.7",
    "198.51.100.7",
    "203.0.113.7",
    "255.255.255.255",
    "100.64.0.1",
    "100.127.255.255",
    "192.0.0.1",
    "198.18.0.1",
    "198.19.255.255",
    "fc00::1",
    "fdff::1",
    "::ffff:10.0.0.1",
    "::ffff:192.168.0.1",
    "::ffff:100.64.0.1",
]
PUBLIC = [
    "8.8.8.8",
    "0.0.0.1",
    "126.255.255.255",
    "128.0.0.1",
    "172.15.255.255",
    "172.32.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "192.0.1.1",
    "169.253.255.255",
    "255.255.255.254",
    "2001:db8::1",
    "2606:4700::1111",
    "fec0::1",
    "fe00::1",
    "::2",
    "::127.0.0.1",  # IPv4-compatible, not IPv4-mapped
    "::ffff:8.8.8.8",
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1 is not in the lists
]


def ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(text)


@pytest.mark.parametrize("address", HARD)
def test_always_blocked_ranges_are_hard_and_internal(address: str) -> None:
    assert is_hard_blocked(ip(address))
    assert is_internal(ip(address))


@pytest.mark.parametrize("address", INTERNAL_NOT_HARD)
def test_private_and_special_ranges_are_internal_but_not_hard(address: str) -> None:
    assert not is_hard_blocked(ip(address))
    assert is_internal(ip(address))


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_neither_hard_nor_internal(address: str) -> None:
    assert not is_hard_blocked(ip(address))
    assert not is_internal(ip(address))


@pytest.mark.parametrize(
    ("port", "expected"),
    [
        *[(port, True) for port in (2379, 2380, 6443, 10250, 10255)],
        *[(port, False) for port in (443, 80, 2381, 10251, 6444)],
    ],
)
def test_control_ports_are_exactly_the_five_listed(port: int, expected: bool) -> None:
    assert is_control_port(port) is expected


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("host.openshell.internal", True),
        ("host.containers.internal", True),
        ("host.docker.internal", True),
        ("HOST.Docker.Internal", True),
        ("gateway.docker.internal", False),
        ("host.docker.internal.", False),
    ],
)
def test_gateway_aliases_are_the_three_names(host: str, expected: bool) -> None:
    assert is_gateway_alias(host) is expected


def endpoint(host: str, allowed_ips: tuple[str, ...] = ()) -> Endpoint:
    return Endpoint(
        index=0,
        host=host,
        ports=(443, 6443),
        layer="l4",
        allowed_ips=tuple(ipaddress.ip_network(c) for c in allowed_ips),
        allowed_ips_raw=allowed_ips,
    )


def action(
    host: str, address: str, port: int = 443, *, trusted_gateway: bool = False
) -> NetworkAction:
    return NetworkAction(
        host=host, port=port, destination_ip=ip(address), trusted_gateway=trusted_gateway
    )


# (endpoint host, allowed_ips, action host, destination, port, trusted, expected)
API = "api.example.com"
OPENSHELL = "host.openshell.internal"
DOCKER = "host.docker.internal"

IP_RULE_CASES = [
    # Exact DNS host without allowed_ips: anything but hard-blocked, no control port.
    (API, (), API, "8.8.8.8", 443, False, True),
    (API, (), API, "10.0.0.1", 443, False, True),
    (API, (), API, "fc00::1", 443, False, True),
    (API, (), API, "127.0.0.1", 443, False, False),
    (API, (), API, "::ffff:127.0.0.1", 443, False, False),
    (API, (), API, "169.254.169.254", 443, False, False),
    (API, (), API, "::1", 443, False, False),
    (API, (), API, "8.8.8.8", 6443, False, False),
    # Wildcard host without allowed_ips: public addresses only, on any port.
    ("*.example.com", (), API, "8.8.8.8", 443, False, True),
    ("*.example.com", (), API, "8.8.8.8", 6443, False, True),
    ("*.example.com", (), API, "2001:db8::1", 443, False, True),
    ("*.example.com", (), API, "10.0.0.1", 443, False, False),
    ("*.example.com", (), API, "::ffff:10.0.0.1", 443, False, False),
    ("*.example.com", (), API, "fd00::1", 443, False, False),
    ("*.example.com", (), API, "100.64.0.1", 443, False, False),
    # IPv4 literal host: only that address (mapped form is another family).
    ("8.8.8.8", (), "8.8.8.8", "8.8.8.8", 443, False, True),
    ("8.8.8.8", (), "8.8.8.8", "8.8.4.4", 443, False, False),
    ("8.8.8.8", (), "8.8.8.8", "::ffff:8.8.8.8", 443, False, False),
    ("8.8.8.8", (), "8.8.8.8", "8.8.8.8", 6443, False, False),
    ("10.0.0.5", (), "10.0.0.5", "10.0.0.5", 443, False, True),
    ("127.0.0.1", (), "127.0.0.1", "127.0.0.1", 443, False, False),
    # allowed_ips: inside some CIDR of the same family, not hard, no control port.
    (API, ("10.0.0.0/8",), API, "10.1.2.3", 443, False, True),
    (API, ("10.0.0.0/8",), API, "11.0.0.1", 443, False, False),
    (API, ("10.0.0.0/8",), API, "8.8.8.8", 443, False, False),
    (API, ("10.0.0.0/8",), API, "::ffff:10.1.2.3", 443, False, False),
    (API, ("10.0.0.0/8",), API, "10.1.2.3", 6443, False, False),
    (API, ("2001:db8::/32",), API, "2001:db8::1", 443, False, True),
    (API, ("2001:db8::/32",), API, "2001:db9::1", 443, False, False),
    (API, ("2001:db8::/32",), API, "10.0.0.1", 443, False, False),
    (API, ("::ffff:10.0.0.0/104",), API, "::ffff:10.9.9.9", 443, False, True),
    (API, ("::ffff:10.0.0.0/104",), API, "10.9.9.9", 443, False, False),
    (API, ("10.0.0.0/9", "10.128.0.0/9"), API, "10.200.0.1", 443, False, True),
    (API, ("10.2.3.4/32",), API, "10.2.3.4", 443, False, True),
    (API, ("10.2.3.4/32",), API, "10.2.3.5", 443, False, False),
    # allowed_ips replace the wildcard's public-only default.
    ("*.example.com", ("10.0.0.0/8",), API, "10.1.1.1", 443, False, True),
    ("*.example.com", ("10.0.0.0/8",), API, "8.8.8.8", 443, False, False),
    ("*.example.com", ("10.0.0.0/8",), API, "10.1.1.1", 6443, False, False),
    # A literal host still pins the address even with allowed_ips.
    ("8.8.8.8", ("8.8.8.0/24",), "8.8.8.8", "8.8.8.8", 443, False, True),
    ("8.8.8.8", ("8.8.8.0/24",), "8.8.8.8", "8.8.8.9", 443, False, False),
    # Gateway aliases: trusted -> link-local except metadata, no control port.
    (OPENSHELL, (), OPENSHELL, "169.254.1.1", 443, True, True),
    (OPENSHELL, (), OPENSHELL, "fe80::1", 443, True, True),
    (OPENSHELL, (), OPENSHELL, "::ffff:169.254.1.1", 443, True, True),
    (OPENSHELL, (), OPENSHELL, "169.254.169.254", 443, True, False),
    (OPENSHELL, (), OPENSHELL, "::ffff:169.254.169.254", 443, True, False),
    (OPENSHELL, (), OPENSHELL, "10.0.0.1", 443, True, False),
    (OPENSHELL, (), OPENSHELL, "8.8.8.8", 443, True, False),
    (OPENSHELL, (), OPENSHELL, "169.254.1.1", 6443, True, False),
    # ... untrusted: the ordinary exact-host rule.
    (OPENSHELL, (), OPENSHELL, "169.254.1.1", 443, False, False),
    (OPENSHELL, (), OPENSHELL, "10.0.0.1", 443, False, True),
    # ... the gateway rule also replaces allowed_ips.
    (DOCKER, ("10.0.0.0/8",), DOCKER, "169.254.1.1", 443, True, True),
    (DOCKER, ("10.0.0.0/8",), DOCKER, "10.0.0.1", 443, True, False),
    (DOCKER, ("10.0.0.0/8",), DOCKER, "10.0.0.1", 443, False, True),
    # ... a wildcard that can match an alias.
    ("host.*.internal", (), "host.containers.internal", "169.254.9.9", 443, True, True),
    ("**.internal", (), DOCKER, "fe80::2", 443, True, True),
    ("**.internal", (), DOCKER, "fe80::2", 443, False, False),
    # ... trusted, but the action host is not an alias: ordinary rule.
    ("**.internal", (), "db.internal", "169.254.9.9", 443, True, False),
    ("**.internal", (), "db.internal", "8.8.8.8", 443, True, True),
    # ... trusted alias, but the endpoint host cannot match an alias: ordinary rule.
    (API, (), DOCKER, "169.254.9.9", 443, True, False),
    (API, (), DOCKER, "10.0.0.1", 443, True, True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("host", "allowed", "action_host", "address", "port", "trusted", "expected"),
    IP_RULE_CASES,
)
def test_endpoint_address_rule(
    host: str,
    allowed: tuple[str, ...],
    action_host: str,
    address: str,
    port: int,
    trusted: bool,
    expected: bool,
) -> None:
    result = endpoint_ip_ok(
        endpoint(host, allowed), action(action_host, address, port, trusted_gateway=trusted)
    )
    assert result is expected

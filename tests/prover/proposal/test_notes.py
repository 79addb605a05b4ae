"""Security notes on the proposed rule, and the IP classes behind them."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from prover.proposal.netclass import is_always_blocked_net, is_internal_ip, is_internal_net
from prover.proposal.notes import endpoint_notes, security_notes


@pytest.mark.parametrize(
    ("endpoint", "notes"),
    [
        ({"host": "api.github.com", "port": 443}, []),
        (
            {"host": "API.github.com", "port": 443, "allow_uninspected_credentials": True},
            [
                "Endpoint 'api.github.com' explicitly allows credentials on traffic OpenShell "
                "cannot inspect or rewrite."
            ],
        ),
        (
            {"host": "10.0.0.5", "port": 443},
            ["Destination '10.0.0.5' appears to be an internal/private address."],
        ),
        (
            {"host": "100.64.1.1", "port": 443},
            ["Destination '100.64.1.1' appears to be an internal/private address."],
        ),
        (
            {"host": "fd00::1", "port": 443},
            ["Destination 'fd00::1' appears to be an internal/private address."],
        ),
        ({"host": "172.15.0.1", "port": 443}, []),
        ({"host": "172.32.0.1", "port": 443}, []),
        ({"host": "10.example.com", "port": 443}, []),
        ({"host": "127.0.0.1", "port": 443}, []),
        ({"host": "169.254.169.254", "port": 80}, []),
        (
            {"host": "*.example.com", "port": 443},
            ["Host '*.example.com' contains a wildcard — this may match unintended destinations."],
        ),
        (
            {"host": "a.com", "port": 443, "allowed_ips": ["100.0.0.0/9", "8.8.0.0/16", "junk"]},
            ["allowed_ips includes private/internal range '100.0.0.0/9'."],
        ),
        ({"host": "a.com", "port": 443, "allowed_ips": ["127.0.0.0/8", "0.0.0.0/0", "::/128"]}, []),
        (
            {"host": "a.com", "port": 443, "allowed_ips": ["10.1.2.3"]},
            ["allowed_ips includes private/internal range '10.1.2.3'."],
        ),
        (
            {"host": "", "port": 443, "allowed_ips": ["8.8.8.0/24"]},
            [
                "allowed_ips allowlist is hostless and may match any hostname resolving within "
                "the configured range."
            ],
        ),
        ({"host": "a.com", "port": 6379}, ["Port 6379 is a well-known database/service port."]),
        (
            {"host": "a.com", "port": 49153},
            ["Port 49153 is in the ephemeral range — this may be a temporary service."],
        ),
        ({"host": "a.com", "port": 49152}, []),
        (
            {"host": "a.com", "port": 3306, "ports": [5432, 50000]},
            [
                "Port 5432 is a well-known database/service port.",
                "Port 50000 is in the ephemeral range — this may be a temporary service.",
            ],
        ),
    ],
)
def test_endpoint_notes(endpoint: dict[str, Any], notes: list[str]) -> None:
    assert endpoint_notes(endpoint) == notes


def test_notes_cover_every_endpoint_in_order() -> None:
    rule = {"endpoints": [{"host": "*.a.example", "port": 443}, {"host": "b.com", "port": 5432}]}
    assert [note.split(" ")[0] for note in security_notes(rule)] == ["Host", "Port"]


@pytest.mark.parametrize(
    ("network", "blocked", "internal"),
    [
        ("127.0.0.0/8", True, True),
        ("126.0.0.0/7", True, True),
        ("169.254.169.254/32", True, True),
        ("0.0.0.0/0", True, True),
        ("10.0.0.0/8", False, True),
        ("8.8.0.0/16", False, False),
        ("::/128", True, True),
        ("fe80::/64", True, True),
        ("fc00::/8", False, True),
        ("::ffff:10.0.0.0/104", False, True),
        ("::ffff:127.0.0.1/128", True, True),
        ("2001:db8::/32", False, False),
    ],
)
def test_network_classes(network: str, blocked: bool, internal: bool) -> None:
    net = ipaddress.ip_network(network)
    assert is_always_blocked_net(net) is blocked
    assert is_internal_net(net) is internal


@pytest.mark.parametrize(
    ("address", "internal"),
    [
        ("192.0.0.8", True),
        ("198.19.1.1", True),
        ("255.255.255.255", True),
        ("203.0.113.9", True),
        ("1.1.1.1", False),
        ("::ffff:192.168.1.1", True),
    ],
)
def test_internal_addresses(address: str, internal: bool) -> None:
    assert is_internal_ip(ipaddress.ip_address(address)) is internal

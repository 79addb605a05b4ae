"""IP address classes used by the security notes (spec §5, reference ``net.rs``).

* always-blocked address: IPv4 loopback, link-local, ``0.0.0.0``; IPv6 ``::1``, ``::``,
  ``fe80::/10`` and the IPv4-mapped loopback / link-local / unspecified addresses;
* always-blocked network: any range touching 127/8 or 169.254/16, or whose network
  address is ``0.0.0.0``; IPv6 ranges containing ``::1``, ``::``, ``fe80::``, the mapped
  127.0.0.1 / 169.254.0.0 / 0.0.0.0, or starting inside ``fe80::/10`` or a mapped
  blocked address;
* internal address: always-blocked, RFC 1918, CGNAT, 192.0.0/24, the documentation
  nets, 198.18/15, 255.255.255.255; IPv6 ULA ``fc00::/7`` and mapped internal IPv4;
* internal network: always-blocked, or intersecting one of the non-hard internal IPv4
  nets (or their mapped ``/96+`` forms) or ``fc00::/7``.
"""

from __future__ import annotations

import ipaddress

IPNet = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddr = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_LOOPBACK_V4 = _V4("127.0.0.0/8")
_LINK_LOCAL_V4 = _V4("169.254.0.0/16")
_UNSPECIFIED_V4 = ipaddress.IPv4Address("0.0.0.0")
_LINK_LOCAL_V6 = ipaddress.IPv6Network("fe80::/10")
_ULA_V6 = ipaddress.IPv6Network("fc00::/7")
_NON_HARD_INTERNAL_V4: tuple[ipaddress.IPv4Network, ...] = tuple(
    _V4(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "255.255.255.255/32",
    )
)
_MAPPED_BASE = int(ipaddress.IPv6Address("::ffff:0.0.0.0"))


def _mapped(network: ipaddress.IPv4Network) -> ipaddress.IPv6Network:
    return ipaddress.IPv6Network(
        (_MAPPED_BASE | int(network.network_address), 96 + network.prefixlen)
    )


def _mapped_address(address: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(_MAPPED_BASE | int(address))


def _intersect(left: IPNet, right: IPNet) -> bool:
    return left.version == right.version and (
        left.network_address <= right.broadcast_address
        and right.network_address <= left.broadcast_address
    )


def _v4_hard(address: ipaddress.IPv4Address) -> bool:
    return address in _LOOPBACK_V4 or address in _LINK_LOCAL_V4 or address == _UNSPECIFIED_V4


def is_always_blocked_ip(address: IPAddr) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return _v4_hard(address)
    if address.is_loopback or address == ipaddress.IPv6Address("::"):
        return True
    if address in _LINK_LOCAL_V6:
        return True
    mapped = address.ipv4_mapped
    return mapped is not None and _v4_hard(mapped)


def is_always_blocked_net(network: IPNet) -> bool:
    if isinstance(network, ipaddress.IPv4Network):
        return (
            _intersect(network, _LOOPBACK_V4)
            or _intersect(network, _LINK_LOCAL_V4)
            or network.network_address == _UNSPECIFIED_V4
        )
    probes = (
        ipaddress.IPv6Address("::1"),
        ipaddress.IPv6Address("::"),
        ipaddress.IPv6Address("fe80::"),
        _mapped_address(ipaddress.IPv4Address("127.0.0.1")),
        _mapped_address(ipaddress.IPv4Address("169.254.0.0")),
        _mapped_address(_UNSPECIFIED_V4),
    )
    if any(probe in network for probe in probes):
        return True
    if network.network_address in _LINK_LOCAL_V6:
        return True
    mapped = network.network_address.ipv4_mapped
    return mapped is not None and _v4_hard(mapped)


def _internal_v4(address: ipaddress.IPv4Address) -> bool:
    return _v4_hard(address) or any(address in net for net in _NON_HARD_INTERNAL_V4)


def is_internal_ip(address: IPAddr) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return _internal_v4(address)
    if is_always_blocked_ip(address) or address in _ULA_V6:
        return True
    mapped = address.ipv4_mapped
    return mapped is not None and _internal_v4(mapped)


def is_internal_net(network: IPNet) -> bool:
    if is_always_blocked_net(network):
        return True
    if isinstance(network, ipaddress.IPv4Network):
        return any(_intersect(network, net) for net in _NON_HARD_INTERNAL_V4)
    return _intersect(network, _ULA_V6) or any(
        _intersect(network, _mapped(net)) for net in _NON_HARD_INTERNAL_V4
    )


def parse_ip(text: str) -> IPAddr | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def parse_allowed_ip(entry: str) -> IPNet | None:
    """A CIDR (host bits allowed) or a bare address as a /32 or /128; else ``None``."""
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None

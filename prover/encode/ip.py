"""The destination-address model of spec §9.4 over a symbolic IP.

A destination is a 128-bit vector plus an ``is_v6`` flag; an IPv4 address keeps its 32
bits in the low end and zeros above (a domain constraint). Membership is family-strict,
exactly as :mod:`prover.concrete.ip`: an IPv4-mapped IPv6 address is an IPv6 address, so
it is not inside an IPv4 CIDR, but the always-blocked and internal lists carry the mapped
forms of their IPv4 ranges.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import cached_property

import z3

from prover.concrete.ip import (
    CONTROL_PORTS,
    HARD_BLOCKED,
    INTERNAL,
    mapped_network,
)
from prover.encode.logic import any_of, mk_and, mk_not
from prover.policy.model import IPAddress, IPNetwork

LINK_LOCAL: tuple[IPNetwork, ...] = (
    ipaddress.IPv4Network("169.254.0.0/16"),
    mapped_network(ipaddress.IPv4Network("169.254.0.0/16")),
    ipaddress.IPv6Network("fe80::/10"),
)
METADATA: tuple[IPNetwork, ...] = (
    ipaddress.IPv4Network("169.254.169.254/32"),
    mapped_network(ipaddress.IPv4Network("169.254.169.254/32")),
)


@dataclass(frozen=True)
class SymbolicIp:
    """A symbolic destination address of one action."""

    bits: z3.BitVecRef
    is_v6: z3.BoolRef

    @classmethod
    def fresh(cls, name: str, ctx: z3.Context) -> SymbolicIp:
        return cls(z3.BitVec(f"{name}_ip", 128, ctx), z3.Bool(f"{name}_ip_v6", ctx))

    def domain(self) -> z3.BoolRef:
        """IPv4 addresses have zero high 96 bits."""
        high = z3.Extract(127, 32, self.bits)
        return z3.Or(self.is_v6, high == z3.BitVecVal(0, 96, self.bits.ctx))

    def in_network(self, network: IPNetwork) -> z3.BoolRef:
        """Family-strict membership in ``network``."""
        ctx = self.bits.ctx
        v6 = network.version == 6
        family = self.is_v6 if v6 else mk_not(self.is_v6)
        prefix = network.prefixlen
        if prefix == 0:
            return family
        width = 128 if v6 else 32
        value = int(network.network_address) >> (width - prefix)
        # The C API directly (some 40 address ranges per check): the high ``prefix``
        # bits of the family's width equal the network's.
        # Each result is wrapped (referenced) before the next call: in a reference-counted
        # context an unreferenced term does not outlive the next API call.
        ref = ctx.ref()
        bits = z3.BitVecRef(
            z3.Z3_mk_extract(ref, width - 1, width - prefix, self.bits.as_ast()), ctx
        )
        sort = z3.BitVecSortRef(z3.Z3_mk_bv_sort(ref, prefix), ctx)
        number = z3.BitVecRef(z3.Z3_mk_numeral(ref, str(value), sort.ast), ctx)
        equal = z3.BoolRef(z3.Z3_mk_eq(ref, bits.as_ast(), number.as_ast()), ctx)
        return mk_and([family, equal], ctx)

    def equals(self, address: IPAddress) -> z3.BoolRef:
        return self.in_network(ipaddress.ip_network(address))

    def in_any(self, networks: tuple[IPNetwork, ...]) -> z3.BoolRef:
        return any_of([self.in_network(network) for network in networks], self.bits.ctx)

    def decode(self, model: z3.ModelRef) -> IPAddress:
        value = model.eval(self.bits, model_completion=True)
        v6 = model.eval(self.is_v6, model_completion=True)
        if not isinstance(value, z3.BitVecNumRef) or not z3.is_bool(v6):
            raise ValueError("destination address has no concrete value in the model")
        number = value.as_long()
        if z3.is_true(v6):
            return ipaddress.IPv6Address(number)
        if not z3.is_false(v6) or number >> 32:
            raise ValueError("destination address is not a valid IPv4 value")
        return ipaddress.IPv4Address(number)


class IpTerms:
    """The fixed address predicates of one action, built once per context."""

    def __init__(self, ip: SymbolicIp, port: z3.ArithRef) -> None:
        ctx = ip.bits.ctx
        self.ip = ip
        self.hard_blocked = ip.in_any(HARD_BLOCKED)
        self.control_port = any_of([port == p for p in sorted(CONTROL_PORTS)], ctx)
        self.ordinary_checks = mk_and([mk_not(self.hard_blocked), mk_not(self.control_port)], ctx)
        self._ordinary: dict[tuple[tuple[IPNetwork, ...], IPAddress | None, bool], z3.BoolRef] = {}

    # Built on first use: only wildcard hosts read ``internal`` and only hosts that can
    # match a gateway alias read ``gateway_ok``, and each costs a few milliseconds of
    # term building per solve.
    @cached_property
    def internal(self) -> z3.BoolRef:
        return self.ip.in_any(INTERNAL)

    @cached_property
    def gateway_ok(self) -> z3.BoolRef:
        return mk_and(
            [
                self.ip.in_any(LINK_LOCAL),
                mk_not(self.ip.in_any(METADATA)),
                mk_not(self.control_port),
            ],
            self.ip.bits.ctx,
        )

    def address_ok(
        self,
        *,
        allowed_ips: tuple[IPNetwork, ...],
        literal: IPAddress | None,
        wildcard: bool,
        gateway_alias: z3.BoolRef | None,
        trusted_gateway: z3.BoolRef,
    ) -> z3.BoolRef:
        """The per-endpoint address rule (connection matching not included).

        ``gateway_alias`` is "the action's host is a gateway alias" for an endpoint whose
        host glob can match an alias, else ``None``.
        """
        ctx = self.ip.bits.ctx
        ordinary = self._ordinary_rule(allowed_ips, literal, wildcard)
        if gateway_alias is not None:
            trusted = mk_and([gateway_alias, trusted_gateway], ctx)
            address = z3.If(trusted, self.gateway_ok, ordinary)
        else:
            address = ordinary
        if literal is not None:
            return mk_and([address, self.ip.equals(literal)], ctx)
        return address

    def _ordinary_rule(
        self, allowed_ips: tuple[IPNetwork, ...], literal: IPAddress | None, wildcard: bool
    ) -> z3.BoolRef:
        """The address rule without the gateway, cached (endpoints share address sets)."""
        key = (allowed_ips, literal, wildcard and not allowed_ips and literal is None)
        ctx = self.ip.bits.ctx
        cached = self._ordinary.get(key)
        if cached is None:
            if allowed_ips:
                cached = mk_and([self.ip.in_any(allowed_ips), self.ordinary_checks], ctx)
            elif literal is not None:
                cached = mk_and([self.ip.equals(literal), self.ordinary_checks], ctx)
            elif wildcard:
                cached = mk_not(self.internal)
            else:
                cached = self.ordinary_checks
            self._ordinary[key] = cached
        return cached

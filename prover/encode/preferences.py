"""What a readable witness looks like: the values a person would try first.

The witness search (:mod:`prover.encode.witness`) steers towards these and keeps what
stays satisfiable; they choose among witnesses and never decide anything. String fields:
values built from the candidate's own patterns with wildcards filled by ``a`` (as the
concrete probes do), ``GET``, ``/``, ``/usr/bin/curl``. Scalar fields: no trusted gateway,
an IPv4 address, ``8.8.8.8``, else the network address of an ``allowed_ips`` entry of the
granting endpoints or ``10.0.0.1`` (the probes' addresses), and the granting endpoint's
layer.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TypeVar

import z3

from prover.encode.action import SymbolicAction
from prover.policy.model import Endpoint, IPAddress, Rule

PREFERRED_ADDRESS = ipaddress.IPv4Address("8.8.8.8")
PRIVATE_ADDRESS = ipaddress.IPv4Address("10.0.0.1")
_T = TypeVar("_T")


def fill_wildcards(pattern: str, star: str = "a", double: str = "a") -> str:
    """``pattern`` with ``**`` replaced by ``double`` and other ``*`` by ``star``."""
    return pattern.replace("**", "\0").replace("*", star).replace("\0", double)


def _upper(text: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in text)


def string_exemplars(granting: Iterable[tuple[Rule, Endpoint]]) -> dict[str, list[str]]:
    """Values to try first for each string field of a witness granted by ``granting``."""
    pairs = list(granting)
    methods: list[str] = []
    paths: list[str] = []
    for _, endpoint in pairs:
        for http in endpoint.allow_rules:
            methods.append("GET" if http.method == "*" else _upper(http.method))
            for double in ("a", "a/a"):
                paths.append(fill_wildcards(http.path or endpoint.path, "a", double) or "/")
    binaries = [fill_wildcards(b) for rule, _ in pairs for b in rule.binaries]
    hosts = [endpoint.host.lower() for _, endpoint in pairs]
    return {
        "host": _unique(
            [*map(fill_wildcards, hosts), *(fill_wildcards(h, "a", "a.a") for h in hosts)]
        ),
        "method": _unique([*methods, "GET"]),
        "path": _unique([*paths, "/"]),
        "binary": _unique([*binaries, "/usr/bin/curl"]),
        "ancestor": _unique([*binaries, "/usr/bin/curl"]),
    }


def scalar_preferences(
    action: SymbolicAction, granting: Iterable[tuple[Rule, Endpoint]]
) -> list[tuple[z3.BoolRef, bool]]:
    """Preferences on the non-string fields, most important first, each with whether it
    is a *fallback*: one that only stands in for an earlier one that cannot be had (an
    address the endpoints list, or a private one, instead of ``8.8.8.8``). All the
    others at once are worth trying together; a fallback with them almost never is."""
    pairs = list(granting)
    layers = {endpoint.layer for _, endpoint in pairs}
    listed: list[IPAddress] = [
        network.network_address for _, endpoint in pairs for network in endpoint.allowed_ips
    ]
    out = [
        (z3.Not(action.trusted_gateway), False),
        (z3.Not(action.ip.is_v6), False),
        (action.ip.equals(PREFERRED_ADDRESS), False),
    ]
    listed.append(PRIVATE_ADDRESS)
    out.append((z3.Or(*[action.ip.equals(address) for address in _unique(listed)]), True))
    if len(layers) == 1:
        out.append((action.is_rest == z3.BoolVal(layers == {"rest"}, action.ctx), False))
    return out


def _unique(values: Iterable[_T]) -> list[_T]:
    return list(dict.fromkeys(values))

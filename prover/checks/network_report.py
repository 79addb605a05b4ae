"""The counterexample of a network witness, as results carry it (spec §11).

Kept apart from the Z3 solver so that a probe's counterexample needs no Z3 import.
"""

from __future__ import annotations

import ipaddress

from prover.policy.model import IPAddress, NetworkAction
from prover.results import NetworkCounterexample


def address_text(address: IPAddress) -> str:
    """An address as the reference prints it: Rust's ``Display`` writes an IPv4-mapped
    IPv6 address as ``::ffff:a.b.c.d``, which Python 3.11 writes ``::ffff:xxxx:xxxx``."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return f"::ffff:{address.ipv4_mapped}"
    return str(address)


def network_counterexample(action: NetworkAction) -> NetworkCounterexample:
    """The JSON/text counterexample of a network witness (spec §11)."""
    query: dict[str, list[str]] = {}
    for key, values in action.query:
        bucket = query.setdefault(key, [])
        bucket.extend(v for v in values if v not in bucket)
    return NetworkCounterexample(
        binary=action.binary,
        ancestor_binary=action.ancestor_binary,
        binary_identity_required=action.binary_identity_required,
        host=action.host,
        destination_ip=address_text(action.destination_ip),
        trusted_gateway=action.trusted_gateway,
        port=action.port,
        protocol=action.protocol,
        method=action.method,
        path=action.path,
        query_params=query or None,
    )

"""Security notes (spec §5): heuristics on the proposed rule alone, not on the merged policy.

For each endpoint in order (host lower-cased in messages): uninspected-credentials
opt-in; an IP-literal host that is internal but not always-blocked; a wildcard host;
each ``allowed_ips`` entry that is internal but not always-blocked (unparseable entries
ignored); a hostless ``allowed_ips`` allowlist; then per effective port (``ports`` if
non-empty, else ``port``) the ephemeral range (> 49152) and well-known database/service
ports. Always-blocked destinations get no note: approval rejects them outright.
"""

from __future__ import annotations

from prover.proposal.endpoint import Data, flag, items, number, text
from prover.proposal.netclass import (
    is_always_blocked_ip,
    is_always_blocked_net,
    is_internal_ip,
    is_internal_net,
    parse_allowed_ip,
    parse_ip,
)

SERVICE_PORTS: frozenset[int] = frozenset({5432, 3306, 6379, 27017, 9200, 11211, 5672})
EPHEMERAL_FLOOR = 49152


def _note_ports(endpoint: Data) -> list[int]:
    listed = [p for p in items(endpoint, "ports") if isinstance(p, int)]
    return listed if listed else [number(endpoint, "port")]


def _allowed_ip_is_internal(entry: str) -> bool:
    network = parse_allowed_ip(entry)
    return network is not None and not is_always_blocked_net(network) and is_internal_net(network)


def endpoint_notes(endpoint: Data) -> list[str]:
    host = text(endpoint, "host").lower()
    notes: list[str] = []
    if flag(endpoint, "allow_uninspected_credentials"):
        notes.append(
            f"Endpoint '{host}' explicitly allows credentials on traffic OpenShell cannot "
            "inspect or rewrite."
        )
    address = parse_ip(host)
    if address is not None and is_internal_ip(address) and not is_always_blocked_ip(address):
        notes.append(f"Destination '{host}' appears to be an internal/private address.")
    if "*" in host:
        notes.append(f"Host '{host}' contains a wildcard — this may match unintended destinations.")
    allowed_ips = [entry for entry in items(endpoint, "allowed_ips") if isinstance(entry, str)]
    for entry in allowed_ips:
        if _allowed_ip_is_internal(entry):
            notes.append(f"allowed_ips includes private/internal range '{entry}'.")
    if not host.strip() and allowed_ips:
        notes.append(
            "allowed_ips allowlist is hostless and may match any hostname resolving within "
            "the configured range."
        )
    for port in _note_ports(endpoint):
        if port > EPHEMERAL_FLOOR:
            notes.append(
                f"Port {port} is in the ephemeral range — this may be a temporary service."
            )
        if port in SERVICE_PORTS:
            notes.append(f"Port {port} is a well-known database/service port.")
    return notes


def security_notes(rule: Data) -> list[str]:
    """Every note of the proposed rule, in endpoint order."""
    return [note for endpoint in items(rule, "endpoints") for note in endpoint_notes(endpoint)]

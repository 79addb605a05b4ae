"""Gateway gates that act outside the prover, reported alongside the assessment.

* **Approval blockers** (reference ``validate_rule_not_always_blocked``): an endpoint of
  the proposed rule whose host is an always-blocked IP literal, ``localhost`` or a known
  metadata hostname, or whose ``allowed_ips`` has an always-blocked range, is accepted as
  a draft but can never be approved (spec §2.4 note).
* **Uninspected credentialed endpoints** (spec §2.4 step 6): the gateway refuses an
  L4-only or ``tls: skip`` endpoint that a provider profile scopes (host *and* port)
  unless it sets ``allow_uninspected_credentials``. The credential set given here has
  no ports, so whether the gateway would refuse cannot be decided; the condition is
  reported as a warning rather than guessed as an application error.
"""

from __future__ import annotations

from prover.proposal.credentials import CredentialSet
from prover.proposal.endpoint import Data, flag, items, ports, text
from prover.proposal.hosts import METADATA_HOSTNAMES, normalize_host
from prover.proposal.netclass import (
    is_always_blocked_ip,
    is_always_blocked_net,
    parse_allowed_ip,
    parse_ip,
)


def approval_blockers(rule: Data) -> list[str]:
    blockers: list[str] = []
    for endpoint in items(rule, "endpoints"):
        host = text(endpoint, "host").strip()
        address = parse_ip(host)
        if address is not None and is_always_blocked_ip(address):
            blockers.append(
                f"proposed rule endpoint host '{host}' is an always-blocked address "
                "(loopback/link-local/unspecified); the proxy will deny traffic to this "
                "destination regardless of policy"
            )
        elif host.lower() in ("localhost", "localhost."):
            blockers.append(
                "proposed rule endpoint host 'localhost' is always blocked; the proxy will "
                "deny traffic to loopback regardless of policy"
            )
        elif normalize_host(host) in METADATA_HOSTNAMES:
            blockers.append(
                f"proposed rule endpoint host '{host}' is a known cloud metadata hostname; the "
                "proxy will deny traffic to this destination regardless of policy"
            )
        for entry in items(endpoint, "allowed_ips"):
            network = parse_allowed_ip(str(entry))
            if network is not None and is_always_blocked_net(network):
                blockers.append(
                    f"proposed rule contains always-blocked `allowed_ips` entry '{entry}'; SSRF "
                    "hardening prevents traffic to these destinations regardless of policy"
                )
    return blockers


def uninspected_credential_warnings(
    rule: Data, rule_key: str, credentials: CredentialSet
) -> list[str]:
    warnings: list[str] = []
    for endpoint in items(rule, "endpoints"):
        if flag(endpoint, "allow_uninspected_credentials"):
            continue
        if not text(endpoint, "protocol").strip():
            mode = "L4-only"
        elif text(endpoint, "tls").strip().lower() == "skip":
            mode = "tls: skip"
        else:
            continue
        host = text(endpoint, "host")
        if not credentials.for_host(host):
            continue
        port = (ports(endpoint) or [0])[0]
        warnings.append(
            f"if an attached provider's profile scopes {host} on this port, the gateway refuses "
            f"this candidate: credentialed endpoint '{host}:{port}' in rule '{rule_key}' uses "
            f"{mode}; configure L7 inspection or explicitly set allow_uninspected_credentials: true"
        )
    return warnings

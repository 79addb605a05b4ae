"""Mechanistic canonicalisation (spec §2.2, reference ``canonicalize_advisor_add_rule``).

A denial observation only knows (host, port, binary). When the effective policy already
has exactly one endpoint contract for that host and port, the proposal's generic
endpoint is replaced by that contract (narrowed to the observed port), so an observed L4
denial on an inspected endpoint keeps its protocol, rules and enforcement. Two distinct
contracts are an error; none leaves the proposal unchanged.

Target rule: the alphabetically first sandbox-owned (non-``_provider_``) base rule that
holds an endpoint equal to the contract *and* already covers every proposed binary;
otherwise the requested name, suffixed ``_2``, ``_3``... while it collides with an
existing key (the merge's overlap fallback may still fold it). This follows the newest
reference; the snapshot notes in spec §2.2 omit the binary-coverage condition, which
only changes whether an inheritance conflict fails or keeps the proposal on its own rule.
"""

from __future__ import annotations

from prover.proposal.endpoint import (
    Data,
    binary_paths,
    clone,
    is_provider_rule,
    items,
    normalize_endpoint,
    ports,
    set_ports,
    text,
)


class CanonicalizationError(Exception):
    """No single existing endpoint contract can stand for the observation."""


def _normalized(endpoint: Data) -> Data:
    copy = clone(endpoint)
    normalize_endpoint(copy)
    return copy


def canonicalize(rules: dict[str, Data], requested_name: str, incoming: Data) -> tuple[str, Data]:
    """The (rule name, rule) a mechanistic proposal is evaluated as.

    ``rules`` is the current effective policy's ``network_policies``; its non-provider
    part is the base policy.
    """
    endpoints = items(incoming, "endpoints")
    if len(endpoints) != 1 or not binary_paths(incoming):
        return requested_name, incoming
    observed = endpoints[0]
    observed_ports = ports(observed)
    if not text(observed, "host").strip() or len(observed_ports) != 1:
        return requested_name, incoming
    port = observed_ports[0]
    host = text(observed, "host")
    contracts: list[Data] = []
    for rule in rules.values():
        for endpoint in items(rule, "endpoints"):
            if text(endpoint, "host").lower() == host.lower() and port in ports(endpoint):
                contract = clone(endpoint)
                set_ports(contract, [port])
                normalize_endpoint(contract)
                if contract not in contracts:
                    contracts.append(contract)
    if not contracts:
        return requested_name, incoming
    if len(contracts) > 1:
        raise CanonicalizationError(
            f"cannot infer one existing endpoint contract for {host}:{port}"
        )
    contract = contracts[0]
    wanted = binary_paths(incoming)
    owners = sorted(
        key
        for key, rule in rules.items()
        if not is_provider_rule(key)
        and any(_normalized(endpoint) == contract for endpoint in items(rule, "endpoints"))
        and (not binary_paths(rule) or all(path in binary_paths(rule) for path in wanted))
    )
    if owners:
        target = owners[0]
    else:
        target, suffix = requested_name, 2
        while target in rules:
            target = f"{requested_name}_{suffix}"
            suffix += 1
    canonical = clone(incoming)
    canonical["name"] = target
    canonical["endpoints"] = [contract]
    return target, canonical

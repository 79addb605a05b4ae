"""Endpoints the runtime treats alike in two policies, so the extended check can set them
aside (``shared_endpoints``) or pair their selection (``coupled_endpoints``).

Both are places (rule key, endpoint index) that agree on both sides and that no other
endpoint of either policy touches: overlap (a shared port and a common host) is closed
over, so a connection such an endpoint matches meets only endpoints like it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from prover.extended.hosts import ANY_HOST, hosts_intersect
from prover.extended.reading import Slot

if TYPE_CHECKING:
    from prover.policy.schema import AuthoredPolicy, EndpointSection


def shared_endpoints(
    candidate: AuthoredPolicy, boundary: AuthoredPolicy, checkpoint: Callable[[], None]
) -> frozenset[Slot]:
    """The endpoints both policies share whose connections no other endpoint touches.

    An endpoint at the same place on both sides (rule key and index) with the same
    content and the same rule binaries, which overlaps (shares a port and a host with)
    only endpoints like it, decides every connection it matches the same way in both
    policies: the same configurations meet in the same order. Leaving it out of both
    readings leaves every other connection as it was and spares the analysis the runtime
    selection inside it. Middlewares are already identical when this is used.
    """
    return _closed_slots(candidate, boundary, lambda a, b: a == b, checkpoint)


def coupled_endpoints(
    candidate: AuthoredPolicy, boundary: AuthoredPolicy, checkpoint: Callable[[], None]
) -> frozenset[Slot]:
    """The endpoints whose runtime selection is the same on both sides.

    Like :func:`shared_endpoints`, but only the configuration must agree (everything
    but ``rules``, ``deny_rules`` and ``access``): the runtime then picks the same
    configuration for every connection in both policies, so where that pick only decides
    the destination check (overlapping ``allowed_ips``), the boundary may keep the
    grants its lower bound drops, against this candidate (see :func:`read_policy`).
    """
    return _closed_slots(candidate, boundary, lambda a, b: _skeleton(a) == _skeleton(b), checkpoint)


def _skeleton(endpoint: EndpointSection) -> dict[str, object]:
    return endpoint.model_dump(exclude={"rules", "deny_rules", "access"})


def _closed_slots(
    candidate: AuthoredPolicy,
    boundary: AuthoredPolicy,
    same: Callable[[EndpointSection, EndpointSection], bool],
    checkpoint: Callable[[], None],
) -> frozenset[Slot]:
    """Slots ``same`` on both sides (with the same rule binaries), closed under overlap:
    every endpoint of either policy that overlaps one of them is one of them."""
    cand_rules, bound_rules = candidate.network_policies, boundary.network_policies
    shared = {
        (key, index)
        for key, rule in cand_rules.items()
        if key in bound_rules and bound_rules[key].binaries == rule.binaries
        for index, endpoint in enumerate(rule.endpoints)
        if index < len(bound_rules[key].endpoints)
        and same(endpoint, bound_rules[key].endpoints[index])
    }
    if not shared:
        return frozenset()

    # Per port, every endpoint on it (both policies); then a worklist from the places
    # that are not shared: whatever they touch is not shared either.
    on_port: dict[int, list[tuple[Slot, str]]] = defaultdict(list)
    placed: dict[Slot, list[tuple[str, int]]] = defaultdict(list)
    for policy in (candidate, boundary):
        for key, rule in policy.network_policies.items():
            for index, ep in enumerate(rule.endpoints):
                host = (ep.host or "").lower() or ANY_HOST
                for port in _ports(ep.port, ep.ports):
                    on_port[port].append(((key, index), host))
                    placed[(key, index)].append((host, port))
    pending = [place for slot, places in placed.items() if slot not in shared for place in places]
    while pending:
        host, port = pending.pop()
        checkpoint()  # a port's members at a time: bounded by the policy limits
        for other, other_host in on_port[port]:
            if other in shared and hosts_intersect(host, other_host):
                shared.discard(other)
                pending.extend(placed[other])
    return frozenset(shared)


def trimmed(policy: AuthoredPolicy, omit: frozenset[Slot]) -> AuthoredPolicy:
    """``policy`` without the ``omit`` endpoints, and without rules left with none."""
    if not omit:
        return policy
    rules = {}
    for key, rule in policy.network_policies.items():
        kept = tuple(ep for i, ep in enumerate(rule.endpoints) if (key, i) not in omit)
        if kept or not rule.endpoints:
            rules[key] = rule.model_copy(update={"endpoints": kept})
    return policy.model_copy(update={"network_policies": rules})


def _ports(port: int | None, ports: tuple[int, ...]) -> frozenset[int]:
    return frozenset(ports) if ports else frozenset((port,) if port else ())

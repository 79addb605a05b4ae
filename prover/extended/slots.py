"""Endpoints the runtime treats alike in two policies, so the extended check can set them
aside (*shared*) or pair their selection (*coupled*).

Both are places (rule key, endpoint index) that agree on both sides and that no other
endpoint of either policy touches: overlap (a shared port and a common host) is closed
over, so a connection such an endpoint matches meets only endpoints like it. One pass
(:func:`endpoint_slots`) gives both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING

from prover.extended.hosts import ANY_HOST, hosts_intersect
from prover.extended.reading import Slot

if TYPE_CHECKING:
    from prover.policy.schema import AuthoredPolicy, EndpointSection


def endpoint_slots(
    candidate: AuthoredPolicy, boundary: AuthoredPolicy, checkpoint: Callable[[], None]
) -> tuple[frozenset[Slot], frozenset[Slot]]:
    """The *shared* and the *coupled* endpoints of a pair: places (rule key, endpoint
    index) that agree on both sides, in rules with the same binaries, closed under
    overlap (every endpoint of either policy that overlaps one of them is one of them).

    **Shared** endpoints agree in everything. Such an endpoint decides every connection
    it matches the same way in both policies (the same configurations meet in the same
    order), so leaving it out of both readings leaves every other connection as it was
    and spares the analysis the runtime selection inside it. Middlewares are already
    identical when this is used.

    **Coupled** endpoints agree in their configuration (everything but ``rules``,
    ``deny_rules`` and ``access``): the runtime then picks the same configuration for
    every connection in both policies, so where that pick only decides the destination
    check (overlapping ``allowed_ips``), the boundary may keep the grants its lower
    bound drops, against this candidate (see :func:`read_policy`). Shared endpoints are
    coupled too.
    """
    cand_rules, bound_rules = candidate.network_policies, boundary.network_policies
    shared: set[Slot] = set()
    coupled: set[Slot] = set()
    for key, rule in cand_rules.items():
        other = bound_rules.get(key)
        if other is None or other.binaries != rule.binaries:
            continue
        for index, (mine, theirs) in enumerate(zip(rule.endpoints, other.endpoints, strict=False)):
            if same_configuration(mine, theirs):
                coupled.add((key, index))
                if all(getattr(mine, name) == getattr(theirs, name) for name in GRANT_FIELDS):
                    shared.add((key, index))
    if not coupled:
        return frozenset(), frozenset()
    # Per port, every endpoint on it (both policies); then a worklist from the places
    # that are not in the set: whatever they touch is not in it either.
    on_port: dict[int, list[tuple[Slot, str]]] = defaultdict(list)
    placed: dict[Slot, list[tuple[str, int]]] = defaultdict(list)
    for policy in (candidate, boundary):
        for key, rule in policy.network_policies.items():
            for index, ep in enumerate(rule.endpoints):
                host = (ep.host or "").lower() or ANY_HOST
                for port in _ports(ep.port, ep.ports):
                    on_port[port].append(((key, index), host))
                    placed[(key, index)].append((host, port))
    return (
        _closed(shared, on_port, placed, checkpoint),
        _closed(coupled, on_port, placed, checkpoint),
    )


#: The fields of an endpoint that grant (the rest are its configuration, what the
#: runtime selects by and handles the connection with).
GRANT_FIELDS = ("rules", "deny_rules", "access")


def same_configuration(first: EndpointSection, second: EndpointSection) -> bool:
    """Both endpoints agree in every field but :data:`GRANT_FIELDS` (compared field by
    field, as their dumps would be, without building them)."""
    if type(first) is not type(second):
        return False
    configuration = _configuration(type(first))
    return configuration(first) == configuration(second)


@cache
def _configuration(kind: type) -> Callable[[object], tuple[object, ...]]:
    """The configuration fields of an endpoint class (a schema model or a record), read
    as one tuple."""
    names = getattr(kind, "_NAMES", None) or tuple(kind.model_fields)  # type: ignore[attr-defined]
    return attrgetter(*(name for name in names if name not in GRANT_FIELDS))


def _closed(
    members: set[Slot],
    on_port: dict[int, list[tuple[Slot, str]]],
    placed: dict[Slot, list[tuple[str, int]]],
    checkpoint: Callable[[], None],
) -> frozenset[Slot]:
    """``members`` less every slot that overlaps, directly or through others removed, a
    place outside it."""
    if not members:
        return frozenset()
    kept = set(members)
    pending = [place for slot, places in placed.items() if slot not in kept for place in places]
    while pending:
        host, port = pending.pop()
        checkpoint()  # a port's members at a time: bounded by the policy limits
        for other, other_host in on_port[port]:
            if other in kept and hosts_intersect(host, other_host):
                kept.discard(other)
                pending.extend(placed[other])
    return frozenset(kept)


def _ports(port: int | None, ports: tuple[int, ...]) -> frozenset[int]:
    return frozenset(ports) if ports else frozenset((port,) if port else ())

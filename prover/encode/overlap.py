"""A conservative syntactic filter: which endpoints can match a common connection.

Two endpoints can only both match a connection when they share a port and their host
globs share a name. The host test is sound (it never says "disjoint" for globs that
share a name) and cheap:

* two exact hosts overlap iff they are equal;
* an exact host and a glob overlap iff the glob matches the host;
* two globs can only overlap if the literal text before their first ``*`` of one is a
  prefix of the other's and the literal text after their last ``*`` of one is a suffix
  of the other's (every name a glob matches starts and ends with those literals).
  Otherwise they are assumed to overlap.

:class:`EndpointIndex` finds the candidates quickly: every matched name ends with the
"complete labels" of a pattern (the labels after the last ``*``'s label, or the whole
host if it has no ``*``), and two overlapping patterns have complete-label suffixes one
of which is a label-suffix of the other. Patterns without complete labels are checked
against everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from prover.concrete.glob import host_matches
from prover.policy.model import Endpoint

EndpointRef = tuple[int, int]


def _literal_prefix(pattern: str) -> str:
    star = pattern.find("*")
    return pattern if star < 0 else pattern[:star]


def _literal_suffix(pattern: str) -> str:
    star = pattern.rfind("*")
    return pattern if star < 0 else pattern[star + 1 :]


@lru_cache(maxsize=16384)
def hosts_may_overlap(left: str, right: str) -> bool:
    """Whether two host globs might match a common name (never false when they do)."""
    left, right = left.lower(), right.lower()
    left_glob, right_glob = "*" in left, "*" in right
    if not left_glob and not right_glob:
        return left == right
    if not left_glob:
        return host_matches(right, left)
    if not right_glob:
        return host_matches(left, right)
    lp, rp = _literal_prefix(left), _literal_prefix(right)
    if not (lp.startswith(rp) or rp.startswith(lp)):
        return False
    ls, rs = _literal_suffix(left), _literal_suffix(right)
    return ls.endswith(rs) or rs.endswith(ls)


def endpoints_may_overlap(left: Endpoint, right: Endpoint) -> bool:
    return not set(left.ports).isdisjoint(right.ports) and hosts_may_overlap(left.host, right.host)


@lru_cache(maxsize=8192)
def complete_labels(pattern: str) -> str:
    """The trailing whole labels every name matched by ``pattern`` ends with."""
    pattern = pattern.lower()
    if "*" not in pattern:
        return pattern
    suffix = _literal_suffix(pattern)
    dot = suffix.find(".")
    return "" if dot < 0 else suffix[dot + 1 :]


@lru_cache(maxsize=8192)
def _label_suffixes(labels: str) -> tuple[str, ...]:
    """``a.b.c`` -> ``(a.b.c, b.c, c)``."""
    parts = labels.split(".")
    return tuple(".".join(parts[i:]) for i in range(len(parts)))


class EndpointIndex:
    """Finds the endpoints of one policy that may overlap a given host and port set."""

    def __init__(self, endpoints: Iterable[tuple[EndpointRef, Endpoint]]) -> None:
        self._endpoints: dict[EndpointRef, Endpoint] = {}
        self._generic: list[EndpointRef] = []
        self._by_labels: dict[str, list[EndpointRef]] = {}
        self._by_label_suffix: dict[str, list[EndpointRef]] = {}
        for ref, endpoint in endpoints:
            self._endpoints[ref] = endpoint
            labels = complete_labels(endpoint.host)
            if not labels:
                self._generic.append(ref)
                continue
            self._by_labels.setdefault(labels, []).append(ref)
            for suffix in _label_suffixes(labels):
                self._by_label_suffix.setdefault(suffix, []).append(ref)

    def overlapping(self, host: str, ports: Iterable[int]) -> list[EndpointRef]:
        """Endpoints that may share a connection with ``host`` on one of ``ports``,
        in policy order."""
        labels = complete_labels(host)
        if labels:
            found: set[EndpointRef] = set(self._generic)
            for suffix in _label_suffixes(labels):
                found.update(self._by_labels.get(suffix, ()))
            found.update(self._by_label_suffix.get(labels, ()))
            pool: Iterable[EndpointRef] = found
        else:
            pool = self._endpoints
        port_set = set(ports)
        return sorted(
            ref
            for ref in pool
            if not port_set.isdisjoint(self._endpoints[ref].ports)
            and hosts_may_overlap(host, self._endpoints[ref].host)
        )

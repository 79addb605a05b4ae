"""Combined resource limits over both policies (spec §4), checked before any shape work.

A limit is exceeded when the observed value is *greater than* it. The reason names the
first metric over its limit in the reference's order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prover.policy.facts import fact

if TYPE_CHECKING:
    from prover.policy.schema import AuthoredPolicy, L7Matcher


MAX_RULES = 1_024
MAX_ENDPOINTS = 4_096
MAX_BINARIES = 4_096
MAX_PORT_ENTRIES = 65_536
MAX_L7_RULES = 16_384
MAX_IP_RANGES = 4_096
MAX_QUERY_MATCHERS = 256
MAX_LONGEST_PATTERN = 4_096
MAX_PATTERN_BYTES = 1_048_576


@dataclass
class _Totals:
    rules: int = 0
    endpoints: int = 0
    binaries: int = 0
    port_entries: int = 0
    l7_rules: int = 0
    ip_ranges: int = 0
    query_matchers: int = 0
    longest_pattern: int = 0
    pattern_bytes: int = 0

    def add_pattern(self, text: str) -> None:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        self.longest_pattern = max(self.longest_pattern, size)
        self.pattern_bytes += size


_TOTALS = tuple(_Totals.__dataclass_fields__)


def _matcher_patterns(matcher: L7Matcher) -> Iterator[str]:
    if matcher.method is not None:
        yield matcher.method
    if matcher.path is not None:
        yield matcher.path
    for key, value in (matcher.query or {}).items():
        yield key
        if isinstance(value, str):
            yield value
        else:
            yield from query_alternatives(value)


def query_alternatives(value: object) -> list[str]:
    """The glob strings of a non-string query matcher (``{any: [...]}`` or ``{glob: g}``)."""
    any_values = getattr(value, "any", None)
    if any_values is not None:
        return list(any_values)
    glob_value = getattr(value, "glob", None)
    return [glob_value] if glob_value is not None else []


def _accumulate(policy: AuthoredPolicy, totals: _Totals) -> None:
    fs = policy.filesystem_policy
    if fs is not None:
        for path in (*fs.read_only, *fs.read_write):
            totals.add_pattern(path)
    for rule in policy.network_policies.values():
        for binary in rule.binaries:
            totals.add_pattern(binary.path)
        for endpoint in rule.endpoints:
            if endpoint.ports:
                totals.port_entries += len(endpoint.ports)
            elif endpoint.port:
                totals.port_entries += 1
            if endpoint.host is not None:
                totals.add_pattern(endpoint.host)
            if endpoint.path is not None:
                totals.add_pattern(endpoint.path)
            for entry in endpoint.allowed_ips:
                totals.ip_ranges += 1
                totals.add_pattern(entry)
            matchers = [r.allow for r in endpoint.rules if r.allow is not None]
            matchers += list(endpoint.deny_rules)
            totals.l7_rules += len(matchers)
            for matcher in matchers:
                totals.query_matchers += len(matcher.query or {})
                for text in _matcher_patterns(matcher):
                    totals.add_pattern(text)


def _policy_totals(policy: AuthoredPolicy) -> _Totals:
    totals = _Totals(rules=len(policy.network_policies))
    for rule in policy.network_policies.values():
        totals.endpoints += len(rule.endpoints)
        totals.binaries += len(rule.binaries)
    _accumulate(policy, totals)
    return totals


def resource_limit_reason(candidate: AuthoredPolicy, boundary: AuthoredPolicy) -> str | None:
    """The reason text if the two policies together exceed a limit, else ``None``."""
    first, second = (
        fact(policy, "limit totals", lambda policy=policy: _policy_totals(policy))
        for policy in (boundary, candidate)
    )
    totals = _Totals(
        **{
            name: max(getattr(first, name), getattr(second, name))
            if name == "longest_pattern"
            else getattr(first, name) + getattr(second, name)
            for name in _TOTALS
        }
    )
    checks = (
        ("rules", totals.rules, MAX_RULES),
        ("endpoints", totals.endpoints, MAX_ENDPOINTS),
        ("binaries", totals.binaries, MAX_BINARIES),
        ("port_entries", totals.port_entries, MAX_PORT_ENTRIES),
        ("l7_rules", totals.l7_rules, MAX_L7_RULES),
        ("ip_ranges", totals.ip_ranges, MAX_IP_RANGES),
        ("query_matchers", totals.query_matchers, MAX_QUERY_MATCHERS),
        ("longest_pattern", totals.longest_pattern, MAX_LONGEST_PATTERN),
        ("pattern_bytes", totals.pattern_bytes, MAX_PATTERN_BYTES),
    )
    for metric, observed, limit in checks:
        if observed > limit:
            return f"containment model exceeds resource limit ({metric}={observed}, limit={limit})"
    return None

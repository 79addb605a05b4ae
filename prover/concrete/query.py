"""Query-parameter matching of REST allow and deny rules (spec §9.5).

A request's query is a map from decoded key to the list of its decoded values (a bare
``?k`` is one empty value). A key with an empty value list cannot come out of the
runtime's parser; it is treated as absent, which is also how the reference's symbolic
model reads it. Keys and values are case-sensitive.

A matcher is an exact string, or ``*`` (``QueryMatcher.value is None``), which matches a
value that contains no ``.`` (the runtime's glob uses ``.`` as its default delimiter).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from prover.policy.model import NetworkAction, QueryMatcher

QueryValues = Mapping[str, Sequence[str]]


def wildcard_value_matches(value: str) -> bool:
    """Whether the whole-value ``*`` matcher accepts ``value``."""
    return "." not in value


def value_matches(matcher: QueryMatcher, value: str) -> bool:
    if matcher.value is None:
        return wildcard_value_matches(value)
    return value == matcher.value


def allow_query_matches(matchers: Iterable[QueryMatcher], query: QueryValues) -> bool:
    """Every configured key is present and *all* of its values match.

    Unconfigured keys are unrestricted; no matchers means no constraint.
    """
    for matcher in matchers:
        values = query.get(matcher.key, ())
        if not values or not all(value_matches(matcher, v) for v in values):
            return False
    return True


def deny_query_matches(matchers: Iterable[QueryMatcher], query: QueryValues) -> bool:
    """Every configured key is present with *any* value matching; none means always."""
    return all(
        any(value_matches(matcher, v) for v in query.get(matcher.key, ())) for matcher in matchers
    )


def action_query(action: NetworkAction) -> dict[str, tuple[str, ...]]:
    """The action's query as a map; a key listed twice has its value lists joined."""
    merged: dict[str, tuple[str, ...]] = {}
    for key, values in action.query:
        merged[key] = merged.get(key, ()) + tuple(values)
    return merged

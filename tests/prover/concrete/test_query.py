"""Query-parameter matching of spec §9.5."""

from __future__ import annotations

import ipaddress

import pytest

from prover.concrete.query import (
    action_query,
    allow_query_matches,
    deny_query_matches,
    wildcard_value_matches,
)
from prover.policy.model import NetworkAction, QueryMatcher

STAR = None


def matchers(**config: str | None) -> tuple[QueryMatcher, ...]:
    return tuple(QueryMatcher(key, value) for key, value in config.items())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[(value, True) for value in ("a", "", "a/b", "a b+c%&=", "é", "\n")],
        *[(value, False) for value in ("a.b", ".", "a.", "..")],
    ],
)
def test_wildcard_value_matches_anything_without_a_dot(value: str, expected: bool) -> None:
    assert wildcard_value_matches(value) is expected


# (configured matchers, request query, allow-matches, deny-matches)
QUERY_CASES = [
    # Empty map: no constraint for allow and deny alike.
    ({}, {}, True, True),
    ({}, {"service": ["a.b"]}, True, True),
    # `*`: every value dot-free to allow; any dot-free value to deny.
    ({"service": STAR}, {}, False, False),
    ({"service": STAR}, {"service": ["a"]}, True, True),
    ({"service": STAR}, {"service": [""]}, True, True),
    ({"service": STAR}, {"service": ["a/b"]}, True, True),
    ({"service": STAR}, {"service": ["a b+c%&="]}, True, True),
    ({"service": STAR}, {"service": ["a.b"]}, False, False),
    ({"service": STAR}, {"service": ["a", "a.b"]}, False, True),
    ({"service": STAR}, {"service": ["a.b", "a"]}, False, True),
    ({"service": STAR}, {"service": ["", "."]}, False, True),
    ({"service": STAR}, {"service": ["/", "a/b", "é", "\n"]}, True, True),
    ({"service": STAR}, {"other": ["x"]}, False, False),
    # Exact value: every value equal to allow; any value equal to deny.
    ({"service": "a"}, {"service": ["a"]}, True, True),
    ({"service": "a"}, {"service": ["a", "a"]}, True, True),
    ({"service": "a"}, {"service": ["a", "b"]}, False, True),
    ({"service": "a"}, {"service": ["b"]}, False, False),
    ({"service": "a"}, {"service": ["A"]}, False, False),
    ({"service": "a"}, {"SERVICE": ["a"]}, False, False),
    ({"service": "a"}, {}, False, False),
    ({"service": "a.b"}, {"service": ["a.b"]}, True, True),
    ({"service": "a.b"}, {"service": ["a.b", "a.b"]}, True, True),
    ({"service": "a.b"}, {"service": ["a"]}, False, False),
    ({"service": ""}, {"service": [""]}, True, True),
    ({"service": ""}, {"service": ["", "a"]}, False, True),
    ({"service": ""}, {}, False, False),
    ({"service": "a b+c%&="}, {"service": ["a b+c%&="]}, True, True),
    # Several keys: all must be configured-present; unconfigured keys are free.
    ({"service": "a", "v": "2"}, {"service": ["a"], "v": ["2"]}, True, True),
    ({"service": "a", "v": "2"}, {"service": ["a"], "v": ["2", "3"]}, False, True),
    ({"service": "a", "v": "2"}, {"service": ["a"]}, False, False),
    ({"service": "a"}, {"service": ["a"], "other": ["x"]}, True, True),
    # The empty key is an ordinary key.
    ({"": STAR}, {"": [""]}, True, True),
    ({"": STAR}, {}, False, False),
    # A key with an empty value list is absent.
    ({"service": STAR}, {"service": []}, False, False),
]


@pytest.mark.parametrize(("config", "query", "allow", "deny"), QUERY_CASES)
def test_query_allow_and_deny_matching(
    config: dict[str, str | None], query: dict[str, list[str]], allow: bool, deny: bool
) -> None:
    configured = tuple(QueryMatcher(k, v) for k, v in config.items())
    assert allow_query_matches(configured, query) is allow
    assert deny_query_matches(configured, query) is deny


def test_repeated_dotted_value_fails_allow_star_but_hits_deny_star() -> None:
    query = {"q": ["a", "a.b"]}
    assert not allow_query_matches(matchers(q=STAR), query)
    assert deny_query_matches(matchers(q=STAR), query)


def test_action_query_joins_a_key_listed_twice_in_request_order() -> None:
    action = NetworkAction(
        host="h",
        port=1,
        destination_ip=ipaddress.ip_address("8.8.8.8"),
        query=(("q", ("a",)), ("k", ("",)), ("q", ("b.c",))),
    )
    assert action_query(action) == {"q": ("a", "b.c"), "k": ("",)}

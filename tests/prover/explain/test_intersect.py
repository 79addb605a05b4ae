"""Intersections of matchers: only what both sides allow, or nothing when unsure."""

from __future__ import annotations

import pytest

from prover.explain.intersect import (
    host_contains,
    intersect_method,
    intersect_path,
    intersect_query,
    intersect_rule,
    path_contains,
)
from prover.policy.model import HttpRule, QueryMatcher


@pytest.mark.parametrize(
    ("outer", "inner", "contained"),
    [
        ("*.example.com", "api.example.com", True),
        ("*.example.com", "a.b.example.com", False),
        ("**.example.com", "*.example.com", True),
        ("api.example.com", "*.example.com", False),
        ("api.example.com", "api.example.com", True),
    ],
)
def test_host_containment(outer: str, inner: str, contained: bool) -> None:
    assert host_contains(outer, inner) is contained


@pytest.mark.parametrize(
    ("outer", "inner", "contained"),
    [
        ("", "/v1/x", True),
        ("/**", "/v1/**", True),
        ("/v1/**", "/v1/*/x", True),
        ("/v1/**", "/v2/**", False),
        ("/v1/*", "/v1/a", True),
        ("/v1/*", "/v1/**", False),
        ("/v1/a", "", False),
    ],
)
def test_path_containment(outer: str, inner: str, contained: bool) -> None:
    assert path_contains(outer, inner) is contained


@pytest.mark.parametrize(
    ("candidate", "boundary", "expected"),
    [
        ("*", "GET", "GET"),
        ("GET", "*", "GET"),
        ("get", "GET", "get"),
        ("GET", "HEAD", "HEAD"),
        ("HEAD", "GET", "HEAD"),
        ("POST", "GET", None),
    ],
)
def test_method_intersection(candidate: str, boundary: str, expected: str | None) -> None:
    assert intersect_method(candidate, boundary) == expected


def test_path_intersection_keeps_the_narrower_or_gives_up() -> None:
    assert intersect_path("/**", "/v1/**") == "/v1/**"
    assert intersect_path("/v1/a", "/v1/*") == "/v1/a"
    assert intersect_path("/v1/*", "/v2/*") is None


def _q(**pairs: str | None) -> tuple[QueryMatcher, ...]:
    return tuple(QueryMatcher(k, v) for k, v in pairs.items())


@pytest.mark.parametrize(
    ("candidate", "boundary", "expected"),
    [
        (_q(), _q(service="x"), _q(service="x")),
        (_q(a="1"), _q(b=None), _q(a="1", b=None)),
        (_q(service=None), _q(service="upload"), _q(service="upload")),
        (_q(service=None), _q(service="a.b"), None),  # '*' never matches a dotted value
        (_q(service="a"), _q(service="b"), None),
        (_q(service=None), _q(service=None), _q(service=None)),
    ],
)
def test_query_intersection_is_the_union_of_constraints(
    candidate: tuple[QueryMatcher, ...],
    boundary: tuple[QueryMatcher, ...],
    expected: tuple[QueryMatcher, ...] | None,
) -> None:
    assert intersect_query(candidate, boundary) == expected


def test_a_rule_intersection_needs_every_part() -> None:
    rule = intersect_rule(HttpRule("*", "/**"), HttpRule("GET", "/v1/**", _q(page=None)))
    assert rule == HttpRule("GET", "/v1/**", _q(page=None))
    assert intersect_rule(HttpRule("POST", "/**"), HttpRule("GET", "/**")) is None

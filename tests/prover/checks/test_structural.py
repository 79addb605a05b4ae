"""The per-endpoint structural shortcut: each relation, then whole-policy coverage, with
Z3 confirming both what is covered and that skipping it loses no counterexample."""

from __future__ import annotations

import pytest

from prover.checks.structural import (
    address_covered,
    endpoint_grant_covered,
    method_covered,
    query_covered,
    structural_coverage,
    structurally_contained,
)
from prover.encode.solver import solve_network_mode
from prover.policy.model import Endpoint, Policy, QueryMatcher
from prover.run.budget import Budget
from tests.prover.encode.helpers import endpoint, http, policy, rest, rule

CURL = "/usr/bin/curl"
IPS = ["8.8.0.0/16"]


@pytest.mark.parametrize(
    ("bound", "cand", "expected"),
    [
        ("*", "DELETE", True),
        ("*", "*", True),
        ("GET", "GET", True),
        ("get", "GET", True),
        ("GET", "head", True),
        ("GET", "*", False),
        ("HEAD", "GET", False),
        ("POST", "PUT", False),
        ("ß", "SS", False),  # the policy side is upper-cased in ASCII only
        ("POST", "", True),  # an empty candidate method matches nothing
    ],
)
def test_method_coverage_follows_the_method_match_rules(
    bound: str, cand: str, expected: bool
) -> None:
    assert method_covered(bound, cand) is expected


def _q(**values: str | None) -> tuple[QueryMatcher, ...]:
    return tuple(QueryMatcher(k, v) for k, v in values.items())


@pytest.mark.parametrize(
    ("bound", "cand", "expected"),
    [
        (_q(), _q(a="x"), True),
        (_q(a="x"), _q(a="x"), True),
        (_q(a=None), _q(a="x"), True),
        (_q(a=None), _q(a=None), True),
        (_q(a=None), _q(a="x.y"), False),  # boundary * refuses dotted values
        (_q(a="x"), _q(a=None), False),
        (_q(a="x"), _q(), False),  # the candidate lets the key be absent
        (_q(a="x"), _q(b="x"), False),
        (_q(a="x"), _q(a="y"), False),
        (_q(a="x"), _q(a="x", b="y"), True),
    ],
)
def test_query_coverage_follows_the_allow_matcher_rules(
    bound: tuple[QueryMatcher, ...], cand: tuple[QueryMatcher, ...], expected: bool
) -> None:
    assert query_covered(bound, cand) is expected


GRANTS = [
    # (name, boundary endpoint, candidate endpoint, covered)
    ("l4 covers rest", endpoint("api.x.com"), rest("api.x.com", allow=[http("GET")]), True),
    ("rest never covers l4", rest("api.x.com", access="full"), endpoint("api.x.com"), False),
    ("ports subset", endpoint("api.x.com", [80, 443]), endpoint("api.x.com", [443]), True),
    ("ports not subset", endpoint("api.x.com", [443]), endpoint("api.x.com", [80, 443]), False),
    ("host glob inside", endpoint("**.x.com"), endpoint("*.x.com"), True),
    ("host glob wider", endpoint("*.x.com"), endpoint("**.x.com"), False),
    (
        "path glob inside",
        rest("a.x.com", allow=[http("GET", "/data/**")]),
        rest("a.x.com", allow=[http("GET", "/data/*/x/**")]),
        True,
    ),
    (
        "path glob wider",
        rest("a.x.com", allow=[http("GET", "/data/*/items")]),
        rest("a.x.com", allow=[http("GET", "/data/**")]),
        False,
    ),
    (
        "candidate endpoint path narrows the rule",
        rest("a.x.com", allow=[http("GET", "/v1/**")]),
        rest("a.x.com", path="/v1/**", allow=[http("GET", "**")]),
        True,
    ),
    (
        "boundary endpoint path narrower",
        rest("a.x.com", path="/v1/**", allow=[http("GET")]),
        rest("a.x.com", allow=[http("GET", "/v2/x")]),
        False,
    ),
    (
        "presets are their methods",
        rest("a.x.com", access="read-write"),
        rest("a.x.com", access="read-only"),
        True,
    ),
    (
        "wider preset",
        rest("a.x.com", access="read-only"),
        rest("a.x.com", access="read-write"),
        False,
    ),
    (
        "every candidate rule needs a cover",
        rest("a.x.com", allow=[http("GET", "/a")]),
        rest("a.x.com", allow=[http("GET", "/a"), http("POST", "/a")]),
        False,
    ),
    (
        "query narrowed",
        rest("a.x.com", allow=[http("GET", "/s", {"q": None})]),
        rest("a.x.com", allow=[http("GET", "/s", {"q": "v"})]),
        True,
    ),
]


@pytest.mark.parametrize(
    ("bound", "cand", "expected"),
    [pytest.param(b, c, e, id=name) for name, b, c, e in GRANTS],
)
def test_endpoint_grant_coverage(bound: Endpoint, cand: Endpoint, expected: bool) -> None:
    assert endpoint_grant_covered(bound, cand) is expected


ADDRESSES = [
    (
        "same allowed_ips",
        endpoint("a.x.com", allowed_ips=IPS),
        endpoint("a.x.com", allowed_ips=IPS),
        True,
    ),
    (
        "narrower CIDR",
        endpoint("a.x.com", allowed_ips=IPS),
        endpoint("a.x.com", allowed_ips=["8.8.8.0/24"]),
        True,
    ),
    (
        "wider CIDR",
        endpoint("a.x.com", allowed_ips=["8.8.8.0/24"]),
        endpoint("a.x.com", allowed_ips=IPS),
        False,
    ),
    (
        "other family",
        endpoint("a.x.com", allowed_ips=["::ffff:8.8.0.0/112"]),
        endpoint("a.x.com", allowed_ips=IPS),
        False,
    ),
    ("exact and exact", endpoint("a.x.com"), endpoint("a.x.com"), True),
    ("wildcard and wildcard", endpoint("**.x.com"), endpoint("*.x.com"), True),
    # an exact host admits private addresses; a wildcard host does not
    ("exact under wildcard", endpoint("*.x.com"), endpoint("a.x.com"), False),
    ("CIDR under exact default", endpoint("a.x.com"), endpoint("a.x.com", allowed_ips=IPS), True),
    # a wildcard default admits control ports that the CIDR rule refuses
    (
        "CIDR under wildcard default",
        endpoint("*.x.com"),
        endpoint("*.x.com", allowed_ips=IPS),
        False,
    ),
    ("default under CIDR", endpoint("a.x.com", allowed_ips=IPS), endpoint("a.x.com"), False),
    ("same literal", endpoint("8.8.8.8"), endpoint("8.8.8.8"), True),
    ("literal under DNS", endpoint("a.x.com"), endpoint("8.8.8.8"), False),
]


@pytest.mark.parametrize(
    ("bound", "cand", "expected"),
    [pytest.param(b, c, e, id=name) for name, b, c, e in ADDRESSES],
)
def test_address_coverage(bound: Endpoint, cand: Endpoint, expected: bool) -> None:
    assert address_covered(bound, cand) is expected


# -- whole policies, confirmed by Z3 ---------------------------------------------------
def _refs(p: Policy) -> set[tuple[int, int]]:
    return {(ri, ei) for ri, r in enumerate(p.rules) for ei in range(len(r.endpoints))}


def _z3_status(cand: Policy, bound: Policy, identity: bool, skip: frozenset) -> str:
    return solve_network_mode(
        cand, bound, identity=identity, budget=Budget(30_000), skip=skip
    ).status


def _assert_sound(cand: Policy, bound: Policy, identity: bool) -> frozenset:
    """The covered slices are really within, and skipping them keeps Z3's verdict."""
    covered = structural_coverage(cand, bound, identity).covered
    uncovered = frozenset(_refs(cand) - covered)
    if covered:
        assert _z3_status(cand, bound, identity, uncovered) == "within"
    assert _z3_status(cand, bound, identity, covered) == _z3_status(
        cand, bound, identity, frozenset()
    )
    return covered


SCENARIOS = [
    (
        "glob-heavy rule is covered in both modes",
        policy(
            rule(
                "r",
                [rest("*.svc.example.com", allowed_ips=IPS, allow=[http("GET", "/data/*/x/**")])],
                ["/usr/bin/*"],
            )
        ),
        policy(
            rule(
                "r",
                [
                    rest(
                        "**.svc.example.com",
                        allowed_ips=IPS,
                        allow=[http("GET", "/data/**"), http("POST", "/data/*/items")],
                    )
                ],
                ["/usr/bin/*"],
            )
        ),
        {(0, 0)},
        {(0, 0)},
    ),
    (
        "only the widened endpoint is left to Z3",
        policy(
            rule("a", [rest("a.x.com", allow=[http("GET", "/a")])], [CURL]),
            rule("b", [rest("b.x.com", allow=[http("DELETE", "/admin/**")])], [CURL]),
        ),
        policy(
            rule("a", [rest("a.x.com", allow=[http("GET", "/a")])], [CURL]),
            rule("b", [rest("b.x.com", allow=[http("GET", "/b")])], [CURL]),
        ),
        {(0, 0)},
        {(0, 0)},
    ),
    (
        "endpoints may be covered by different boundary rules",
        policy(rule("r", [endpoint("a.x.com"), endpoint("b.x.com")], [CURL])),
        policy(rule("a", [endpoint("a.x.com")], [CURL]), rule("b", [endpoint("b.x.com")], [CURL])),
        {(0, 0), (0, 1)},
        {(0, 0), (0, 1)},
    ),
    (
        "a binary outside the boundary rule is only covered without identity",
        policy(rule("r", [endpoint("a.x.com")], ["/usr/bin/python"])),
        policy(rule("r", [endpoint("a.x.com")], [CURL])),
        {(0, 0)},
        set(),
    ),
    (
        "binary globs are compared as globs",
        policy(rule("r", [endpoint("a.x.com")], [CURL])),
        policy(rule("r", [endpoint("a.x.com")], ["/usr/bin/*"])),
        {(0, 0)},
        {(0, 0)},
    ),
    (
        "a rule without binaries grants nothing in identity mode",
        policy(rule("r", [endpoint("a.x.com")], [])),
        policy(rule("r", [endpoint("b.x.com")], [CURL])),
        set(),
        {(0, 0)},
    ),
    (
        "a boundary deny on an overlapping endpoint blocks the shortcut",
        policy(rule("r", [rest("a.x.com", allow=[http("GET", "/a")])], [CURL])),
        policy(rule("r", [rest("a.x.com", allow=[http("*")], deny=[http("GET", "/a")])], [CURL])),
        set(),
        set(),
    ),
    (
        "a boundary deny elsewhere does not",
        policy(rule("r", [rest("a.x.com", allow=[http("GET", "/a")])], [CURL])),
        policy(
            rule("r", [rest("a.x.com", allow=[http("*")])], [CURL]),
            rule("d", [rest("b.x.com", allow=[http("*")], deny=[http("GET", "/a")])], [CURL]),
        ),
        {(0, 0)},
        {(0, 0)},
    ),
    (
        "a candidate deny does not matter",
        policy(rule("r", [rest("a.x.com", allow=[http("*")], deny=[http("GET", "/a")])], [CURL])),
        policy(rule("r", [rest("a.x.com", allow=[http("*")])], [CURL])),
        {(0, 0)},
        {(0, 0)},
    ),
    (
        # The wildcard endpoint's grants are covered, but an overlapping exact endpoint
        # of the candidate admits private addresses the boundary's wildcard refuses:
        # GET / on api.x.com at 10.0.0.1 exceeds, and only the wildcard's slice sees it.
        "another candidate endpoint's address rule keeps a covered grant in Z3",
        policy(
            rule("w", [rest("*.x.com", allow=[http("GET", "/")])], [CURL]),
            rule("e", [rest("api.x.com", [443, 8443], allow=[http("POST", "/p")])], [CURL]),
        ),
        policy(rule("w", [rest("*.x.com", allow=[http("GET", "/")])], [CURL])),
        set(),
        set(),
    ),
    (
        "an exact host under a boundary wildcard is not covered (private addresses)",
        policy(rule("r", [endpoint("api.x.com")], [CURL])),
        policy(rule("r", [endpoint("*.x.com")], [CURL])),
        set(),
        set(),
    ),
    (
        "an address admitted by the boundary elsewhere keeps the shortcut",
        policy(
            rule("w", [rest("*.x.com", allow=[http("GET", "/")])], [CURL]),
            rule("e", [rest("api.x.com", allow=[http("POST", "/p")])], [CURL]),
        ),
        policy(
            rule("w", [rest("*.x.com", allow=[http("GET", "/")])], [CURL]),
            rule("e", [endpoint("api.x.com")], [CURL]),
        ),
        {(0, 0), (1, 0)},
        {(0, 0), (1, 0)},
    ),
]


@pytest.mark.parametrize(
    ("cand", "bound", "covered_off", "covered_on"),
    [pytest.param(c, b, off, on, id=name) for name, c, b, off, on in SCENARIOS],
)
def test_structural_coverage_of_each_candidate_endpoint(
    cand: Policy, bound: Policy, covered_off: set, covered_on: set
) -> None:
    assert _assert_sound(cand, bound, False) == covered_off
    assert _assert_sound(cand, bound, True) == covered_on
    assert structurally_contained(cand, bound, True) is (covered_on == _refs(cand))


def test_the_address_interaction_really_exceeds_only_through_the_covered_grant() -> None:
    cand, bound = SCENARIOS[9][1], SCENARIOS[9][2]
    result = solve_network_mode(
        cand, bound, identity=False, budget=Budget(30_000), skip=frozenset({(1, 0)})
    )
    assert result.status == "exceeds"
    assert result.witness is not None and result.witness.method in ("GET", "HEAD")


def test_an_empty_candidate_is_covered() -> None:
    coverage = structural_coverage(policy(), policy(rule("r", [endpoint("a.x.com")], [CURL])), True)
    assert coverage.complete and coverage.total == 0

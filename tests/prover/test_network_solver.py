"""The per-mode Z3 network solver: one hand-built policy pair per modelled dimension."""

from __future__ import annotations

import ipaddress
import string
import threading
import time
from collections.abc import Callable

import pytest
import z3

import prover.encode.solver as network_solver
from prover.checks.network_report import address_text, network_counterexample
from prover.concrete.network import network_allows
from prover.encode.logic import SolverGaveUp, make_solver
from prover.encode.solver import (
    INVALID_WITNESS_REASON,
    NetworkModeResult,
    solve_network_mode,
    witness_is_canonical,
)
from prover.policy.model import Policy
from prover.results import ReasonCode
from prover.run.budget import Budget, BudgetExhausted
from tests.prover.encode.helpers import endpoint, http, policy, rest, rule, single

CURL = "/usr/bin/curl"
PYTHON = "/usr/bin/python"
IPS = ["8.8.8.0/24"]
"""Pinning allowed_ips keeps the destination-IP mode identical while another dimension
is tested (exact and wildcard hosts differ in their implicit address rules)."""


def solve(candidate: Policy, boundary: Policy, identity: bool = False) -> NetworkModeResult:
    result = solve_network_mode(candidate, boundary, identity=identity, budget=Budget(20_000))
    assert result.decided_by == "z3"
    if result.status == "exceeds":
        witness = result.witness
        assert witness is not None
        assert witness.binary_identity_required is identity
        assert witness_is_canonical(witness)
        assert network_allows(candidate, witness), witness
        assert not network_allows(boundary, witness), witness
    return result


def ep(host: str, **kwargs: object) -> object:
    return endpoint(host, allowed_ips=IPS, **kwargs)  # type: ignore[arg-type]


def rep(host: str = "api.example.com", **kwargs: object) -> object:
    return rest(host, allowed_ips=IPS, **kwargs)


# (name, candidate, boundary, identity, expected status)
CASES = [
    # hosts
    ("same exact host", single(ep("api.example.com")), single(ep("api.example.com")), "within"),
    ("other exact host", single(ep("api.example.com")), single(ep("b.example.com")), "exceeds"),
    ("exact under wildcard", single(ep("api.example.com")), single(ep("*.example.com")), "within"),
    ("wildcard over exact", single(ep("*.example.com")), single(ep("api.example.com")), "exceeds"),
    ("star under double star", single(ep("*.example.com")), single(ep("**.example.com")), "within"),
    ("double star over star", single(ep("**.example.com")), single(ep("*.example.com")), "exceeds"),
    (
        "prefix star under star",
        single(ep("api*.example.com")),
        single(ep("*.example.com")),
        "within",
    ),
    (
        "host matching ignores case",
        single(ep("API.example.com")),
        single(ep("api.example.com")),
        "within",
    ),
    # ports
    (
        "fewer ports",
        single(ep("api.example.com", ports=[443])),
        single(ep("api.example.com", ports=[443, 80])),
        "within",
    ),
    (
        "more ports",
        single(ep("api.example.com", ports=[443, 80])),
        single(ep("api.example.com", ports=[443])),
        "exceeds",
    ),
    # layer
    ("rest under l4", single(rep(access="full")), single(ep("api.example.com")), "within"),
    ("l4 over rest", single(ep("api.example.com")), single(rep(access="full")), "exceeds"),
    # methods
    (
        "read-only under read-write",
        single(rep(access="read-only")),
        single(rep(access="read-write")),
        "within",
    ),
    (
        "read-write over read-only",
        single(rep(access="read-write")),
        single(rep(access="read-only")),
        "exceeds",
    ),
    (
        "HEAD under GET",
        single(rep(allow=[http("HEAD")])),
        single(rep(allow=[http("GET")])),
        "within",
    ),
    (
        "GET over HEAD",
        single(rep(allow=[http("GET")])),
        single(rep(allow=[http("HEAD")])),
        "exceeds",
    ),
    (
        "method case on the policy side",
        single(rep(allow=[http("post")])),
        single(rep(allow=[http("POST")])),
        "within",
    ),
    (
        "star method over GET",
        single(rep(allow=[http("*")])),
        single(rep(allow=[http("GET")])),
        "exceeds",
    ),
    (
        "long token method",
        single(rep(allow=[http("X" * 65)])),
        single(rep(allow=[http("*")])),
        "within",
    ),
    # paths
    (
        "path under recursive glob",
        single(rep(allow=[http("GET", "/v1/items")])),
        single(rep(allow=[http("GET", "/v1/**")])),
        "within",
    ),
    (
        "recursive glob over path",
        single(rep(allow=[http("GET", "/v1/**")])),
        single(rep(allow=[http("GET", "/v1/items")])),
        "exceeds",
    ),
    (
        "star segment over literal",
        single(rep(allow=[http("GET", "/v1/*")])),
        single(rep(allow=[http("GET", "/v1/items")])),
        "exceeds",
    ),
    (
        "endpoint recursive path over a rule star",
        single(rest("api.example.com", path="/v1/**", allow=[http("GET")], allowed_ips=IPS)),
        single(rep(allow=[http("GET", "/v1/*")])),
        "exceeds",
    ),
    (
        "middle double star",
        single(rep(allow=[http("GET", "/a/x/b")])),
        single(rep(allow=[http("GET", "/a/**/b")])),
        "within",
    ),
    (
        "endpoint path narrows",
        single(rep(path="/v1/**", access="full")),
        single(rep(allow=[http("*", "/v1/**")])),
        "within",
    ),
    (
        "endpoint path widens",
        single(rep(path="/v2/**", access="full")),
        single(rep(path="/v1/**", access="full")),
        "exceeds",
    ),
    # query classes
    (
        "exact under star",
        single(rep(allow=[http("GET", "", {"q": "a"})])),
        single(rep(allow=[http("GET", "", {"q": None})])),
        "within",
    ),
    (
        "dotted exact over star",
        single(rep(allow=[http("GET", "", {"q": "a.b"})])),
        single(rep(allow=[http("GET", "", {"q": None})])),
        "exceeds",
    ),
    (
        "star over exact",
        single(rep(allow=[http("GET", "", {"q": None})])),
        single(rep(allow=[http("GET", "", {"q": "a"})])),
        "exceeds",
    ),
    (
        "extra key narrows",
        single(rep(allow=[http("GET", "", {"q": "a", "r": None})])),
        single(rep(allow=[http("GET", "", {"q": "a"})])),
        "within",
    ),
    (
        "missing key widens",
        single(rep(allow=[http("GET")])),
        single(rep(allow=[http("GET", "", {"q": None})])),
        "exceeds",
    ),
    (
        "empty exact value under star",
        single(rep(allow=[http("GET", "", {"q": ""})])),
        single(rep(allow=[http("GET", "", {"q": None})])),
        "within",
    ),
    (
        "query keys are case-sensitive",
        single(rep(allow=[http("GET", "", {"Q": "a"})])),
        single(rep(allow=[http("GET", "", {"q": "a"})])),
        "exceeds",
    ),
    # denies
    (
        "boundary deny refuses",
        single(rep(access="full")),
        single(rep(access="full", deny=[http("POST", "/admin/**")])),
        "exceeds",
    ),
    (
        "same deny is contained",
        single(rep(access="full", deny=[http("POST", "/admin/**")])),
        single(rep(access="full", deny=[http("POST", "/admin/**")])),
        "within",
    ),
    (
        "wider candidate deny",
        single(rep(access="full", deny=[http("*", "/admin/**")])),
        single(rep(access="full", deny=[http("POST", "/admin/**")])),
        "within",
    ),
    (
        "deny GET covers HEAD",
        single(rep(access="full", deny=[http("GET", "/a")])),
        single(rep(access="full", deny=[http("HEAD", "/a")])),
        "within",
    ),
    (
        "deny query star",
        single(rep(access="full", deny=[http("GET", "", {"q": None})])),
        single(rep(access="full", deny=[http("GET", "", {"q": "a"})])),
        "within",
    ),
    # destination IPs
    (
        "cidr subset",
        single(endpoint("api.example.com", allowed_ips=["10.2.0.0/16"])),
        single(endpoint("api.example.com", allowed_ips=["10.0.0.0/8"])),
        "within",
    ),
    (
        "cidr superset",
        single(endpoint("api.example.com", allowed_ips=["10.0.0.0/8"])),
        single(endpoint("api.example.com", allowed_ips=["10.2.0.0/16"])),
        "exceeds",
    ),
    (
        "v6 cidr subset",
        single(endpoint("api.example.com", allowed_ips=["2001:db8:1234::/48"])),
        single(endpoint("api.example.com", allowed_ips=["2001:db8::/32"])),
        "within",
    ),
    (
        "v6 cidr superset",
        single(endpoint("api.example.com", allowed_ips=["2001:db8::/32"])),
        single(endpoint("api.example.com", allowed_ips=["2001:db8:1234::/48"])),
        "exceeds",
    ),
    (
        "v6 against v4",
        single(endpoint("api.example.com", allowed_ips=["2001:db8::/32"])),
        single(endpoint("api.example.com", allowed_ips=["10.0.0.0/8"])),
        "exceeds",
    ),
    (
        "cidr union",
        single(endpoint("api.example.com", allowed_ips=["10.0.0.0/8"])),
        single(endpoint("api.example.com", allowed_ips=["10.0.0.0/9", "10.128.0.0/9"])),
        "within",
    ),
    (
        "host literal equals its /32",
        single(endpoint("api.example.com", allowed_ips=["10.2.3.4/32"])),
        single(endpoint("api.example.com", allowed_ips=["10.2.3.4"])),
        "within",
    ),
    (
        "exact host default contains a private cidr",
        single(endpoint("api.example.com", allowed_ips=["10.2.0.0/16"])),
        single(endpoint("api.example.com")),
        "within",
    ),
    (
        "cidr does not contain the exact default",
        single(endpoint("api.example.com")),
        single(endpoint("api.example.com", allowed_ips=["10.2.0.0/16"])),
        "exceeds",
    ),
    (
        "wildcard default does not contain a private cidr",
        single(endpoint("*.example.com", allowed_ips=["10.2.0.0/16"])),
        single(endpoint("*.example.com")),
        "exceeds",
    ),
    (
        "exact default is broader than a wildcard default",
        single(endpoint("api.example.com")),
        single(endpoint("*.example.com")),
        "exceeds",
    ),
    ("ip literal host", single(endpoint("8.8.8.8")), single(endpoint("8.8.8.8")), "within"),
    (
        "ip literal host under its cidr",
        single(endpoint("8.8.8.8")),
        single(endpoint("8.8.8.8", allowed_ips=["8.8.8.0/24"])),
        "within",
    ),
    # gateway aliases
    (
        "gateway narrower cidr",
        single(endpoint("host.openshell.internal", allowed_ips=["10.2.0.0/16"])),
        single(endpoint("host.openshell.internal", allowed_ips=["10.0.0.0/8"])),
        "within",
    ),
    (
        "gateway wider cidr",
        single(endpoint("host.openshell.internal", allowed_ips=["10.0.0.0/8"])),
        single(endpoint("host.openshell.internal", allowed_ips=["10.2.0.0/16"])),
        "exceeds",
    ),
    (
        "wildcard reaching the gateway",
        single(endpoint("*.internal", allowed_ips=IPS)),
        single(endpoint("host.docker.internal", allowed_ips=IPS)),
        "exceeds",
    ),
    (
        "gateway alias on a control port allows nothing, trusted or not",
        single(endpoint("host.docker.internal", ports=[6443])),
        policy(),
        "within",
    ),
    # control ports
    (
        "exact host on a control port allows nothing",
        single(endpoint("api.example.com", ports=[6443])),
        policy(),
        "within",
    ),
    (
        "wildcard host reaches a control port",
        single(endpoint("*.example.com", ports=[6443])),
        policy(),
        "exceeds",
    ),
    (
        "cidr endpoint on a control port allows nothing",
        single(endpoint("api.example.com", ports=[10250], allowed_ips=IPS)),
        policy(),
        "within",
    ),
    # empty
    ("empty candidate", policy(), single(ep("api.example.com")), "within"),
    ("anything against an empty boundary", single(ep("api.example.com")), policy(), "exceeds"),
]


@pytest.mark.parametrize(
    ("candidate", "boundary", "expected"),
    [pytest.param(c, b, e, id=name) for name, c, b, e in CASES],
)
@pytest.mark.parametrize("identity", [False, True], ids=["identity-off", "identity-on"])
def test_each_dimension_is_decided_and_every_witness_replays(
    candidate: Policy, boundary: Policy, expected: str, identity: bool
) -> None:
    assert solve(candidate, boundary, identity).status == expected


BINARY_CASES = [
    ("other binary", [PYTHON], [CURL], "within", "exceeds"),
    ("glob over exact", ["/usr/bin/*"], [CURL], "within", "exceeds"),
    ("exact under glob", [CURL], ["/usr/bin/*"], "within", "within"),
    ("exact under recursive glob", [CURL], ["/usr/**"], "within", "within"),
    ("same glob", ["/opt/*/bin/*"], ["/opt/*/bin/*"], "within", "within"),
    ("no binaries in the candidate", [], [CURL], "within", "within"),
    ("no binaries in the boundary", [CURL], [], "within", "exceeds"),
]


@pytest.mark.parametrize(
    ("candidate_bins", "boundary_bins", "off", "on"),
    [pytest.param(c, b, off, on, id=name) for name, c, b, off, on in BINARY_CASES],
)
def test_binaries_only_matter_with_identity_on(
    candidate_bins: list[str], boundary_bins: list[str], off: str, on: str
) -> None:
    candidate = single(ep("api.example.com"), binaries=candidate_bins)
    boundary = single(ep("api.example.com"), binaries=boundary_bins)
    assert solve(candidate, boundary, identity=False).status == off
    assert solve(candidate, boundary, identity=True).status == on


def test_identity_off_witness_has_no_binaries() -> None:
    result = solve(single(ep("api.example.com")), policy(), identity=False)
    assert result.witness is not None
    assert result.witness.binary is None and result.witness.ancestor_binary is None


def test_boundary_deny_fires_for_the_ancestor_binary() -> None:
    grant = rule("grant", [rep(access="full")], [CURL])
    deny = rule("deny", [rep(access="full", deny=[http("POST")])], [PYTHON])
    boundary = policy(grant, deny)
    candidate = policy(grant)
    result = solve(candidate, boundary, identity=True)
    assert result.status == "exceeds"
    witness = result.witness
    assert witness is not None and witness.method == "POST"
    assert PYTHON in (witness.binary, witness.ancestor_binary)
    # The candidate carrying the same deny is contained.
    assert solve(policy(grant, deny), boundary, identity=True).status == "within"


def test_deny_of_another_rule_blocks_the_grant_policy_wide() -> None:
    boundary = single(rep(access="read-only"))
    candidate = policy(
        rule("grant", [rep(access="full")], [CURL]),
        rule("deny", [rep(access="full", deny=[http("POST"), http("PUT"), http("PATCH")])], [CURL]),
    )
    # DELETE and other methods are still granted and not denied.
    assert solve(candidate, boundary).status == "exceeds"
    no_extra = policy(
        rule("grant", [rep(allow=[http("GET"), http("POST")])], [CURL]),
        rule("deny", [rep(allow=[http("GET")], deny=[http("POST")])], [CURL]),
    )
    assert solve(no_extra, boundary).status == "within"


def test_query_witness_carries_the_decoded_values() -> None:
    candidate = single(rep(allow=[http("GET", "", {"q": "a.b"})]))
    boundary = single(rep(allow=[http("GET", "", {"q": None})]))
    result = solve(candidate, boundary)
    assert result.witness is not None
    assert dict(result.witness.query) == {"q": ("a.b",)}
    counterexample = network_counterexample(result.witness)
    assert counterexample.query_params == {"q": ["a.b"]}


def test_witness_prefers_the_candidates_own_values() -> None:
    result = solve(single(rep(allow=[http("GET", "/v1/**")])), policy())
    witness = result.witness
    assert witness is not None
    assert (witness.host, witness.method, witness.path) == ("api.example.com", "GET", "/v1/a")
    assert str(witness.destination_ip) == "8.8.8.8" and not witness.trusted_gateway


def test_exceeding_only_through_non_canonical_hosts_is_invalid_witness() -> None:
    # The boundary covers every label that starts with a canonical DNS character, so
    # only names such as "-a.example.com" or ".example.com" exceed: true exceeds that
    # cannot be reported. Never "within".
    boundary = policy(
        *(
            rule(c, [ep(f"{c}*.example.com")], [CURL])
            for c in string.ascii_lowercase + string.digits + "_"
        )
    )
    result = solve(single(ep("*.example.com")), boundary)
    assert result.status == "inconclusive"
    assert result.reason_code is ReasonCode.INVALID_WITNESS
    assert result.reason == INVALID_WITNESS_REASON


def test_a_witness_that_does_not_replay_is_invalid_not_a_counterexample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(network_solver, "network_allows", lambda policy, action: False)
    result = solve_network_mode(
        single(ep("api.example.com")), policy(), identity=False, budget=Budget(10_000)
    )
    assert result.status == "inconclusive"
    assert result.reason_code is ReasonCode.INVALID_WITNESS
    assert result.reason == INVALID_WITNESS_REASON
    assert result.witness is None


def test_unknown_from_z3_is_solver_unknown_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def unknown(self: object, solver: object, assumptions: object, short: bool) -> object:
        raise SolverGaveUp("incomplete quantifiers")

    monkeypatch.setattr(network_solver._Checker, "check", unknown)
    result = solve_network_mode(
        single(ep("api.example.com")), policy(), identity=False, budget=Budget(10_000)
    )
    assert (result.status, result.reason_code, result.reason) == (
        "inconclusive",
        ReasonCode.SOLVER_UNKNOWN,
        "incomplete quantifiers",
    )


def test_sliced_and_monolithic_queries_agree_on_the_table() -> None:
    for name, candidate, boundary, expected in CASES:
        result = solve_network_mode(
            candidate, boundary, identity=False, budget=Budget(20_000), slicing=False
        )
        assert result.status == expected, name


def test_slices_group_endpoints_with_the_same_host_and_ports() -> None:
    candidate = policy(
        rule("a", [ep("api.example.com"), rep(access="read-only")], [CURL]),
        rule("b", [ep("other.example.com")], [CURL]),
    )
    result = solve(candidate, candidate)
    assert result.status == "within"
    assert result.slices == 2


# ---------------------------------------------------------------------------------------
# Deadlines and cancellation


#: Far below the seconds of work the large pair and the pigeonhole formula take, far
#: above any stop latency: "it stopped" rather than "it finished".
STOPPED_EARLY_S = 2.5


def _large_pair() -> tuple[Policy, Policy]:
    """Thousands of wildcard endpoints: seconds of work, whatever Z3's speed."""
    candidate = policy(
        *(
            rule(f"r{i}", [endpoint(f"*.svc{i}.example.com", [443, 8443], allowed_ips=IPS)], [CURL])
            for i in range(2000)
        )
    )
    boundary = policy(
        *(
            rule(
                f"r{i}",
                [endpoint(f"**.svc{i}.example.com", [443, 8443, 9443], allowed_ips=["8.8.0.0/16"])],
                [CURL],
            )
            for i in range(2000)
        )
    )
    return candidate, boundary


def _pigeonhole(ctx: z3.Context, holes: int) -> list[z3.BoolRef]:
    """holes + 1 pigeons in ``holes`` holes: unsat, and hard for Z3 from about 9 holes."""
    p = [[z3.Bool(f"p{i}_{j}", ctx) for j in range(holes)] for i in range(holes + 1)]
    facts = [z3.Or(*row) for row in p]
    for j in range(holes):
        for a in range(holes + 1):
            for b in range(a + 1, holes + 1):
                facts.append(z3.Or(z3.Not(p[a][j]), z3.Not(p[b][j])))
    return facts


def _in_thread(
    work: Callable[[], object],
) -> tuple[threading.Thread, list[object], threading.Event]:
    outcome: list[object] = []
    finished = threading.Event()

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)
        finished.set()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome, finished


def test_an_expired_budget_returns_solver_timeout_promptly() -> None:
    candidate, boundary = _large_pair()
    budget = Budget(300)
    started = time.monotonic()
    result = solve_network_mode(candidate, boundary, identity=True, budget=budget)
    elapsed = time.monotonic() - started
    assert (result.status, result.reason_code) == ("inconclusive", ReasonCode.SOLVER_TIMEOUT)
    assert result.reason == "solver timeout elapsed"
    # Stopped by the deadline, not by finishing (seconds of work): how promptly is
    # measured by benchmarks/stop_latency.py, not asserted on a shared machine.
    assert elapsed < STOPPED_EARLY_S


def test_z3_timeout_inside_a_check_is_solver_timeout() -> None:
    budget = Budget(300)
    ctx = z3.Context()
    mode = network_solver._ModeSolver(ctx, policy(), policy(), False, budget)
    solver = make_solver(ctx)
    solver.add(*_pigeonhole(ctx, 11))
    started = time.monotonic()
    with budget.solver_context(ctx), pytest.raises(BudgetExhausted) as stopped:
        mode.check_on(solver, [], short=False)
    assert not stopped.value.cancelled
    assert time.monotonic() - started < STOPPED_EARLY_S


def test_an_exhausted_budget_stops_before_any_query() -> None:
    budget = Budget(0)
    result = solve_network_mode(
        single(ep("a.example.com")), policy(), identity=False, budget=budget
    )
    assert (result.reason_code, result.queries) == (ReasonCode.SOLVER_TIMEOUT, 0)


def test_cancel_from_another_thread_stops_a_solve() -> None:
    candidate, boundary = _large_pair()
    budget = Budget(30_000)
    thread, outcome, finished = _in_thread(
        lambda: solve_network_mode(candidate, boundary, identity=True, budget=budget)
    )
    time.sleep(0.3)
    assert not finished.is_set()
    cancelled_at = time.monotonic()
    budget.cancel()
    assert finished.wait(5)
    stopped_after = time.monotonic() - cancelled_at
    thread.join()
    assert stopped_after < STOPPED_EARLY_S
    result = outcome[0]
    assert isinstance(result, NetworkModeResult)
    assert (result.status, result.reason_code, result.reason) == (
        "inconclusive",
        ReasonCode.CANCELLED,
        "containment check was cancelled",
    )


def test_cancel_interrupts_a_running_z3_check() -> None:
    budget = Budget(30_000)
    ctx = z3.Context()
    mode = network_solver._ModeSolver(ctx, policy(), policy(), False, budget)
    solver = make_solver(ctx)
    solver.add(*_pigeonhole(ctx, 11))

    def check() -> object:
        with budget.solver_context(ctx):
            return mode.check_on(solver, [], short=False)

    thread, outcome, finished = _in_thread(check)
    time.sleep(0.3)
    assert not finished.is_set()
    cancelled_at = time.monotonic()
    budget.cancel()
    assert finished.wait(5)
    assert time.monotonic() - cancelled_at < STOPPED_EARLY_S
    thread.join()
    assert isinstance(outcome[0], BudgetExhausted) and outcome[0].cancelled


def test_a_cancelled_budget_is_cancelled_before_solving() -> None:
    budget = Budget(10_000)
    budget.cancel()
    result = solve_network_mode(
        single(ep("a.example.com")), policy(), identity=False, budget=budget
    )
    assert (result.reason_code, result.reason) == (
        ReasonCode.CANCELLED,
        "containment check was cancelled",
    )


@pytest.mark.parametrize(
    ("address", "text"),
    [("8.8.8.8", "8.8.8.8"), ("2001:db8::", "2001:db8::"), ("::ffff:8.8.8.8", "::ffff:8.8.8.8")],
)
def test_addresses_print_as_the_reference_prints_them(address: str, text: str) -> None:
    assert address_text(ipaddress.ip_address(address)) == text


def test_escape_like_policy_text_is_read_literally() -> None:
    # z3.StringVal would read "GE\u{54}" as "GET"; the policy means the literal text.
    candidate = single(rep(allow=[http("GET")]))
    boundary = single(rep(allow=[http("GE\\u{54}")]))
    assert solve(candidate, boundary).status == "exceeds"
    assert solve(boundary, boundary).status == "within"


# -- skipped grants ----------------------------------------------------------------------
def _deny_pair() -> tuple[Policy, Policy]:
    """Candidate endpoint 0 is inside the boundary and denies GET /secret; endpoint 1
    grants GET /b and GET /secret, which the deny of endpoint 0 blocks."""
    covered = rep(allow=[http("GET", "/a")], deny=[http("GET", "/secret")])
    other = rep(allow=[http("GET", "/b"), http("GET", "/secret")])
    candidate = policy(rule("c", [covered, other], [CURL]))
    boundary = single(rep(allow=[http("GET", "/a"), http("GET", "/b")]))
    return candidate, boundary


def test_a_skipped_endpoint_keeps_its_deny_in_the_other_slices() -> None:
    candidate, boundary = _deny_pair()
    assert solve(candidate, boundary).status == "within"
    result = solve_network_mode(
        candidate, boundary, identity=False, budget=Budget(20_000), skip=frozenset({(0, 0)})
    )
    assert result.status == "within"
    assert result.queries >= 1


def test_skipping_every_grant_asks_nothing() -> None:
    candidate, boundary = _deny_pair()
    result = solve_network_mode(
        candidate,
        boundary,
        identity=True,
        budget=Budget(20_000),
        skip=frozenset({(0, 0), (0, 1)}),
    )
    assert (result.status, result.queries, result.slices) == ("within", 0, 0)


@pytest.mark.parametrize("slicing", [True, False])
def test_a_skipped_grant_is_not_asked_about(slicing: bool) -> None:
    # Endpoint 0 really exceeds; skipping it (a caller's claim) hides that exceed, which
    # shows the skip removes exactly that grant and nothing else.
    wide = rep(allow=[http("POST", "/a")])
    inside = rep(allow=[http("GET", "/a")])
    candidate = policy(rule("c", [wide, inside], [CURL]))
    boundary = single(rep(allow=[http("GET", "/a")]))
    kwargs = {"identity": False, "slicing": slicing}
    assert solve_network_mode(candidate, boundary, budget=Budget(20_000), **kwargs).status == (
        "exceeds"
    )
    skipped = solve_network_mode(
        candidate, boundary, budget=Budget(20_000), skip=frozenset({(0, 0)}), **kwargs
    )
    assert skipped.status == "within"


class _UnknownSolver:
    """A stand-in for ``z3.Solver`` whose every check ends ``unknown`` with ``reason``."""

    def __init__(self, reason: str, sleep_s: float = 0.0) -> None:
        self.reason, self.sleep_s = reason, sleep_s

    def set(self, *_: object) -> None:
        pass

    def check(self, *_: object) -> object:
        time.sleep(self.sleep_s)
        return z3.unknown

    def reason_unknown(self) -> str:
        return self.reason


@pytest.mark.parametrize("reason", ["canceled", "timeout"])
def test_z3_stopping_on_its_timer_at_the_deadline_is_a_timeout_not_an_unknown(reason: str) -> None:
    from prover.encode.solver import _Checker

    budget = Budget(30)
    checker = _Checker(budget)
    time.sleep(0.025)  # Z3's timer may fire a few ms before the budget's deadline
    with pytest.raises(BudgetExhausted) as stopped:
        checker.check(_UnknownSolver(reason), [], short=False)  # type: ignore[arg-type]
    assert not stopped.value.cancelled


def test_z3_giving_up_with_time_left_is_reported_with_its_reason() -> None:
    from prover.encode.logic import SolverGaveUp
    from prover.encode.solver import _Checker

    checker = _Checker(Budget(10_000))
    with pytest.raises(SolverGaveUp, match="canceled"):
        checker.check(_UnknownSolver("canceled"), [], short=True)  # type: ignore[arg-type]
    with pytest.raises(SolverGaveUp, match="incomplete quantifiers"):
        checker.check(_UnknownSolver("incomplete quantifiers"), [], short=False)  # type: ignore[arg-type]


# -- work done once -----------------------------------------------------------------------


def test_both_identity_modes_of_a_check_share_one_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prover.api import check_boundary
    from prover.results import Verdict
    from tests.support import boundary_cases

    made: list[z3.Context] = []
    real_context = z3.Context

    def counting_context(*args: object, **kwargs: object) -> z3.Context:
        made.append(real_context(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(network_solver.z3, "Context", counting_context)
    asked: list[bool] = []
    real_solve = network_solver.solve_network_mode

    def spy(*args: object, **kwargs: object) -> NetworkModeResult:
        asked.append(kwargs["identity"])  # type: ignore[arg-type]
        return real_solve(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(network_solver, "solve_network_mode", spy)
    # An acceptance case that Z3 decides in both identity modes.
    (case,) = [c for c in boundary_cases() if c["id"] == "rp-ancestor-deny-exceeds"]
    check = check_boundary(case["candidate"], case["boundary"], timeout_ms=20_000)
    assert check.outcome.verdict is Verdict.EXCEEDS
    assert asked == [False, True]
    assert len(made) == 1


def test_the_oracle_asks_z3_each_question_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from prover.encode.oracle import StringOracle

    questions: list[tuple[object, ...]] = []
    real_holds = StringOracle._holds_in_z3
    real_realise = StringOracle._realise_in_z3

    def holds(self: StringOracle, *args: object) -> bool:
        questions.append(("holds", id(self), repr(args)))
        return real_holds(self, *args)  # type: ignore[arg-type]

    def realise(self: StringOracle, *args: object) -> object:
        questions.append(("realise", id(self), repr(args)))
        return real_realise(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(StringOracle, "_holds_in_z3", holds)
    monkeypatch.setattr(StringOracle, "_realise_in_z3", realise)
    grant = rule("grant", [rep(access="full")], [CURL])
    deny = rule("deny", [rep(access="full", deny=[http("POST")])], [PYTHON])
    result = solve(policy(grant), policy(grant, deny), identity=True)
    assert result.status == "exceeds"
    assert questions and len(questions) == len(set(questions))

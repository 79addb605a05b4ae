"""Deterministic probes: the reference's probes unchanged, covered endpoints' own grants
not replayed, and extra probes for uncovered endpoints further down."""

from __future__ import annotations

import pytest

import prover.checks.probes as probes
from prover.checks.probes import probe_counterexample
from prover.checks.structural import structural_coverage
from prover.concrete import network_allows
from prover.policy.model import Policy
from prover.run.budget import Budget
from tests.prover.checks.test_structural_pairs import _models
from tests.prover.encode.helpers import endpoint, http, policy, rest, rule, single

CURL = "/usr/bin/curl"


def _wide_pair(size: int, widened: int) -> tuple[Policy, Policy]:
    """``size`` rules on distinct hosts; the candidate's rule ``widened`` adds DELETE."""
    cand, bound = [], []
    for i in range(size):
        b = rest(f"api{i}.x.com", allow=[http("GET", "/a")])
        c = rest(f"api{i}.x.com", allow=[http("DELETE" if i == widened else "GET", "/a")])
        bound.append(rule(f"r{i:03}", [b], [CURL]))
        cand.append(rule(f"r{i:03}", [c], [CURL]))
    return policy(*cand), policy(*bound)


@pytest.mark.parametrize("identity", [False, True])
def test_an_uncovered_endpoint_beyond_the_first_eight_is_probed(identity: bool) -> None:
    cand, bound = _wide_pair(40, widened=30)
    covered = structural_coverage(cand, bound, identity).covered
    assert len(covered) == 39
    found = probe_counterexample(cand, bound, identity, Budget(10_000), covered)
    assert found is not None and found.host == "api30.x.com" and found.method == "DELETE"
    assert network_allows(cand, found) and not network_allows(bound, found)
    assert probe_counterexample(cand, bound, identity, Budget(10_000)) is None


def test_a_covered_endpoints_own_grants_are_not_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    cand, bound = _wide_pair(8, widened=7)
    covered = structural_coverage(cand, bound, False).covered
    calls: list[str] = []

    def counting(policy: Policy, action: object) -> bool:
        calls.append(getattr(action, "host", ""))
        return network_allows(policy, action)  # type: ignore[arg-type]

    monkeypatch.setattr(probes, "allows", counting)
    found = probe_counterexample(cand, bound, False, Budget(10_000), covered)
    assert found is not None and found.host == "api7.x.com"
    assert set(calls) == {"api7.x.com"}


def test_a_covered_endpoints_probe_granted_elsewhere_is_still_replayed() -> None:
    # The covered endpoint's probe (GET /y under endpoint path /x) is not its own grant;
    # the uncovered L4 endpoint grants it, so it is a counterexample.
    cand = policy(
        rule("a", [rest("a.x.com", path="/x", allow=[http("GET", "/y")])], [CURL]),
        rule("b", [endpoint("a.x.com", [443])], [CURL]),
    )
    bound = policy(rule("a", [rest("a.x.com", allow=[http("GET", "/x")])], [CURL]))
    covered = structural_coverage(cand, bound, False).covered
    assert covered == {(0, 0)}
    found = probe_counterexample(cand, bound, False, Budget(10_000), covered)
    assert found == probe_counterexample(cand, bound, False, Budget(10_000))
    assert found is not None and found.path == "/y"


@pytest.mark.parametrize("index", range(0, 100, 3))
def test_the_reference_probes_find_what_they_found_without_coverage(
    index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = _models(index)
    if models is None:
        return
    cand, bound = models
    monkeypatch.setattr(probes, "EXTRA_PAIRS", 0)
    for identity in (False, True):
        covered = structural_coverage(cand, bound, identity).covered
        with_coverage = probe_counterexample(cand, bound, identity, Budget(10_000), covered)
        without = probe_counterexample(cand, bound, identity, Budget(10_000))
        assert with_coverage == without


@pytest.mark.parametrize("identity", [False, True])
def test_probes_stay_in_the_action_domain_port_zero_is_no_port(identity: bool) -> None:
    # Issue 14: `ports: [0, 443]` against `ports: [443]` was a false exceed on port 0,
    # an action outside the §9.1 domain (ports 1..65535).
    bound = single(endpoint("api.example.com", (443,)))
    cand = single(endpoint("api.example.com", (0, 443)))
    assert probe_counterexample(cand, bound, identity, Budget(10_000)) is None
    wider = single(endpoint("api.example.com", (0, 80)))
    found = probe_counterexample(wider, bound, identity, Budget(10_000))
    assert found is not None and found.port == 80
    only_zero = single(endpoint("api.example.com", (0,)))
    assert probe_counterexample(only_zero, bound, identity, Budget(10_000)) is None


def test_port_zero_in_a_candidate_is_not_an_exceed_end_to_end() -> None:
    from prover.api import check_boundary
    from prover.results import Verdict

    text = (
        "version: 1\nnetwork_policies:\n  r:\n    endpoints:\n"
        "      - {{host: api.example.com, ports: {ports}}}\n"
        "    binaries:\n      - {{path: /usr/bin/curl}}\n"
    )
    candidate, boundary = text.format(ports="[0, 443]"), text.format(ports="[443]")
    check = check_boundary(candidate, boundary, reference_semantics=True)
    assert check.outcome.verdict is Verdict.WITHIN
    # By default it is an error: the runtime refuses port 0 (validate_sandbox_policy).
    check = check_boundary(candidate, boundary)
    assert check.outcome.verdict is Verdict.ERROR
    assert "has invalid port 0; expected 1..=65535" in (check.outcome.reason or "")

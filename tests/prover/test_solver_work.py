"""How much work the Z3 stage does for the shared acceptance cases: solver checks, the
parts built once per check. Counted, never timed (``benchmarks/speed_floor.py`` times)."""

from __future__ import annotations

import pytest
import z3

import prover.encode.ip as ip_module
import prover.encode.solver as network_solver
from prover.api import check_boundary
from prover.results import Verdict
from tests.support import boundary_cases


def _case(case_id: str) -> dict[str, object]:
    (case,) = [c for c in boundary_cases() if c["id"] == case_id]
    return case


def _checks(monkeypatch: pytest.MonkeyPatch) -> list[z3.Solver]:
    asked: list[z3.Solver] = []
    real_check = z3.Solver.check

    def counting(self: z3.Solver, *assumptions: object) -> z3.CheckSatResult:
        asked.append(self)
        return real_check(self, *assumptions)

    monkeypatch.setattr(z3.Solver, "check", counting)
    return asked


def test_a_witness_with_every_preference_takes_one_check_after_the_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The deciding query, then one attempt with every preference but the fallbacks
    # (8.8.8.8 and "a listed or private address" together never hold).
    asked = _checks(monkeypatch)
    case = _case("query-deny-receive-vs-unrestricted-exceeds")
    check = check_boundary(case["candidate"], case["boundary"], timeout_ms=20_000)  # type: ignore[arg-type]
    assert check.outcome.verdict is Verdict.EXCEEDS
    assert check.receipt.decided_by == "z3"
    assert check.outcome.counterexample.destination_ip == "8.8.8.8"  # type: ignore[union-attr]
    assert len(asked) == 2


def test_both_identity_modes_share_one_solver_and_one_set_of_address_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _checks(monkeypatch)
    built: list[object] = []
    real_init = ip_module.IpTerms.__init__

    def counting_init(self: ip_module.IpTerms, *args: object) -> None:
        built.append(self)
        real_init(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ip_module.IpTerms, "__init__", counting_init)
    modes: list[bool] = []
    real_solve = network_solver.solve_network_mode

    def spy(*args: object, **kwargs: object) -> network_solver.NetworkModeResult:
        modes.append(kwargs["identity"])  # type: ignore[arg-type]
        return real_solve(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(network_solver, "solve_network_mode", spy)
    case = _case("ip-cidr-containment-3-within")
    check = check_boundary(case["candidate"], case["boundary"], timeout_ms=20_000)  # type: ignore[arg-type]
    assert check.outcome.verdict is Verdict.WITHIN
    assert modes == [False, True]
    assert len(built) == 1  # the address predicates: once per check, not per mode
    assert len(asked) == 2 and asked[0] is asked[1]  # one unsat query per mode, one solver


def test_a_within_answer_never_asks_the_string_oracle(monkeypatch: pytest.MonkeyPatch) -> None:
    from prover.encode.oracle import StringOracle

    asked = _checks(monkeypatch)
    solved: list[str] = []
    real_solve = StringOracle.solve

    def spy(self: StringOracle, field: str, *args: object, **kwargs: object) -> object:
        solved.append(field)
        return real_solve(self, field, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(StringOracle, "solve", spy)
    case = _case("query-deny-receive-vs-deny-star-within")
    check = check_boundary(case["candidate"], case["boundary"], timeout_ms=20_000)  # type: ignore[arg-type]
    assert check.outcome.verdict is Verdict.WITHIN
    assert solved == []
    assert len({id(solver) for solver in asked}) == 1


def test_witness_preferences_ask_a_bounded_number_of_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by probing deadlines: with 1,500 binary globs the witness search tested
    every binary against every atom (seconds past a 1 s deadline). Counted: 300 globs
    made 136,960 atom tests before, about 4,200 now."""
    from prover.api import check_boundary
    from prover.encode import strings

    calls = [0]
    original = strings.StringAtoms.holds_for

    def counting(self: strings.StringAtoms, key: object, value: str) -> bool:
        calls[0] += 1
        return original(self, key, value)  # type: ignore[arg-type]

    monkeypatch.setattr(strings.StringAtoms, "holds_for", counting)

    def policy(binaries: str) -> str:
        return (
            "version: 1\nnetwork_policies:\n  r:\n"
            "    endpoints: [{host: api.x.com, port: 443}]\n    binaries: " + binaries + "\n"
        )

    globs = "[" + ", ".join(f"{{path: '/opt/t{i}/**'}}" for i in range(300)) + "]"
    outcome = check_boundary(
        policy(globs), policy(globs.replace("t1/", "u1/")), timeout_ms=60_000
    ).outcome
    assert outcome.verdict.value == "exceeds_boundary"
    assert calls[0] < 20_000

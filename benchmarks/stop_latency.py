"""How promptly a network solve stops at its deadline or on cancellation.

    PYTHONPATH=. python benchmarks/stop_latency.py [--runs 9]

The tests only check that a solve *stops* (with the right reason) rather than finishing
its seconds of work; the latency itself depends on the machine's load, so it is measured
here:

* **deadline overrun**: the large pair of ``tests/prover/test_network_solver.py`` with a
  300 ms budget: elapsed time minus 300 ms;
* **cancel latency, solve**: the same pair with a 30 s budget, cancelled from another
  thread after 300 ms: time from ``cancel()`` to the solve's return;
* **cancel latency, Z3 check**: a pigeonhole formula (unsat, hard for Z3) inside one
  ``check``, cancelled after 300 ms: time from ``cancel()`` to the interrupt's return.

The session-2 targets were an overrun of at most 10 % + 50 ms and a cancel latency
under 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable

import z3

import prover.encode.solver as network_solver
from prover.encode.logic import make_solver
from prover.encode.solver import solve_network_mode
from prover.policy.model import Policy
from prover.run.budget import Budget, BudgetExhausted
from tests.prover.encode.helpers import policy
from tests.prover.test_network_solver import _large_pair, _pigeonhole


def _cancelled_after(work: Callable[[Budget], object], budget: Budget, wait_s: float) -> float:
    """Run ``work`` in a thread, cancel after ``wait_s``; seconds from cancel to return."""
    done = threading.Event()

    def run() -> None:
        try:
            work(budget)
        except BudgetExhausted:
            pass
        finally:
            done.set()

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(wait_s)
    cancelled_at = time.monotonic()
    budget.cancel()
    done.wait(30)
    latency = time.monotonic() - cancelled_at
    thread.join()
    return latency


def _overrun(candidate: Policy, boundary: Policy) -> float:
    started = time.monotonic()
    solve_network_mode(candidate, boundary, identity=True, budget=Budget(300))
    return time.monotonic() - started - 0.3


def _z3_check(budget: Budget) -> object:
    ctx = z3.Context()
    mode = network_solver._ModeSolver(ctx, policy(), policy(), False, budget)
    solver = make_solver(ctx)
    solver.add(*_pigeonhole(ctx, 11))
    with budget.solver_context(ctx):
        return mode.check_on(solver, [], short=False)


def _ms(values: list[float]) -> str:
    as_ms = [v * 1000 for v in values]
    return f"median {statistics.median(as_ms):6.1f} ms (min {min(as_ms):.1f}, max {max(as_ms):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    candidate, boundary = _large_pair()
    overruns = [_overrun(candidate, boundary) for _ in range(args.runs)]

    def solve(budget: Budget) -> object:
        return solve_network_mode(candidate, boundary, identity=True, budget=budget)

    solves = [_cancelled_after(solve, Budget(30_000), 0.3) for _ in range(args.runs)]
    checks = [_cancelled_after(_z3_check, Budget(30_000), 0.3) for _ in range(args.runs)]
    print(f"deadline overrun (300 ms budget)  {_ms(overruns)}")
    print(f"cancel latency, network solve     {_ms(solves)}")
    print(f"cancel latency, one Z3 check      {_ms(checks)}")


if __name__ == "__main__":
    main()

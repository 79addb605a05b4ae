"""The async runner: a call queued for a worker slot does not outlive its deadline."""

from __future__ import annotations

import os
import threading
import time

import anyio
import pytest

from prover import runner
from prover.budget import Budget

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_call_queued_past_its_deadline_runs_at_once_instead_of_waiting() -> None:
    release = threading.Event()
    runner.set_concurrency_limit(1)
    try:

        def hold_the_slot(budget: Budget) -> str:
            release.wait(5)
            return "held"

        def report_expiry(budget: Budget) -> bool:
            return budget.expired

        async with anyio.create_task_group() as tg:
            tg.start_soon(runner.run_in_worker, hold_the_slot, Budget(10_000))
            await anyio.sleep(0.05)
            started = time.monotonic()
            with anyio.fail_after(3):
                expired = await runner.run_in_worker(report_expiry, Budget(200))
            waited = time.monotonic() - started
            release.set()
        assert expired is True
        assert waited < 1.5  # the slot stayed busy for up to 5 s
    finally:
        release.set()
        runner.set_concurrency_limit(max(1, os.cpu_count() or 1))


def test_interrupting_a_busy_solver_repeatedly_never_raises_in_the_caller() -> None:
    """z3's wrapper reads the context's shared error code after ``Z3_interrupt``, so an
    interrupt landing while the worker's own call is being cancelled used to raise the
    worker's "canceled" error in the watchdog, which crashed the whole tool call."""
    from prover.api import check_boundary
    from tests.load.workload import slow_pair

    candidate, boundary = slow_pair()
    errors: list[BaseException] = []
    for _ in range(40):
        budget = Budget(1_500)
        worker = threading.Thread(
            target=lambda b=budget: check_boundary(candidate, boundary, budget=b)
        )
        worker.start()
        while worker.is_alive():
            try:
                budget.interrupt_solvers()
            except BaseException as error:
                errors.append(error)
        worker.join()
    assert errors == []

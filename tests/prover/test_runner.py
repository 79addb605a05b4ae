"""The async runner: a call queued for a worker slot does not outlive its deadline."""

from __future__ import annotations

import os
import threading
import time

import anyio
import pytest

from prover.run import runner
from prover.run.budget import Budget, BudgetExhausted

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_call_queued_past_its_deadline_answers_then_and_never_runs() -> None:
    release = threading.Event()
    ran: list[str] = []
    runner.set_concurrency_limit(1)
    try:

        def hold_the_slot(budget: Budget) -> str:
            release.wait(5)
            return "held"

        def late_work(budget: Budget) -> str:
            ran.append("late")
            return "ran"

        async with anyio.create_task_group() as tg:
            tg.start_soon(runner.run_in_worker, hold_the_slot, Budget(10_000))
            await anyio.sleep(0.05)
            budget = Budget(200)
            with anyio.fail_after(3), pytest.raises(BudgetExhausted) as stopped:
                await runner.run_in_worker(late_work, budget)
            answered_expired = budget.expired
            release.set()
        assert stopped.value.cancelled is False
        assert answered_expired  # answered at its deadline, not before
        assert ran == []  # the slot stayed busy: the work never ran, late or without a slot
    finally:
        release.set()
        runner.set_concurrency_limit(runner.DEFAULT_CONCURRENCY_LIMIT)


async def test_a_boundary_check_never_admitted_is_inconclusive_with_its_receipt() -> None:
    from tests.load.workload import TRIVIAL

    release = threading.Event()
    runner.set_concurrency_limit(1)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(runner.run_in_worker, lambda b: release.wait(5), Budget(10_000))
            await anyio.sleep(0.05)
            with anyio.fail_after(3):
                check = await runner.check_boundary_async(*TRIVIAL, timeout_ms=150)
            release.set()
        assert check.outcome.verdict.value == "inconclusive"
        assert check.outcome.reason_code is not None
        assert check.outcome.reason_code.value == "solver_timeout"
        assert check.receipt.elapsed_ms >= 150
        assert check.receipt.candidate_sha256 is not None
    finally:
        release.set()
        runner.set_concurrency_limit(runner.DEFAULT_CONCURRENCY_LIMIT)


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


async def test_a_quick_check_does_not_wait_for_a_solver_slot_held_by_a_long_solve() -> None:
    from prover.run.solver_slots import set_solver_slots, solver_slots
    from tests.load.workload import TRIVIAL, slow_pair

    set_solver_slots(1)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: runner.check_boundary_async(*slow_pair(), timeout_ms=4_000))
            with anyio.fail_after(3):
                while solver_slots().in_use == 0:
                    await anyio.sleep(0.01)
            started = time.monotonic()
            quick = await runner.check_boundary_async(*TRIVIAL, timeout_ms=4_000)
            waited = time.monotonic() - started
            assert solver_slots().in_use == 1  # the long solve still holds the only slot
            tg.cancel_scope.cancel()
        assert quick.outcome.verdict.value == "within_boundary"
        assert waited < 1.5  # it used to queue behind the solve for up to 4 s
    finally:
        set_solver_slots(max(1, os.cpu_count() or 1))


async def test_large_inputs_wait_for_their_own_tokens_while_small_ones_are_admitted() -> None:
    release = threading.Event()
    held = 0

    def hold(budget: Budget) -> None:
        nonlocal held
        held += 1
        release.wait(5)

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(runner.LARGE_CHECK_LIMIT):
                tg.start_soon(lambda: runner.run_in_worker(hold, Budget(10_000), input_bytes=10**6))
            with anyio.fail_after(3):
                while held < runner.LARGE_CHECK_LIMIT:
                    await anyio.sleep(0.01)
            with anyio.fail_after(2):
                small = await runner.run_in_worker(
                    lambda b: "small", Budget(5_000), input_bytes=100
                )
            with pytest.raises(BudgetExhausted):  # it waited for a large token until its deadline
                await runner.run_in_worker(lambda b: b.expired, Budget(200), input_bytes=10**6)
            release.set()
        assert small == "small"
    finally:
        release.set()


async def test_while_slow_starts_only_for_a_slow_call_and_stops_when_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner, "SLOW_AFTER_S", 0.02)
    events: list[str] = []

    async def while_slow() -> None:
        events.append("started")
        try:
            await anyio.sleep(60)
        finally:
            events.append("stopped")

    def slow(budget: Budget) -> str:
        time.sleep(0.2)
        return "slow"

    with anyio.fail_after(10):
        assert await runner.run_in_worker(slow, Budget(5_000), while_slow=while_slow) == "slow"
    assert events == ["started", "stopped"]

    events.clear()
    monkeypatch.setattr(runner, "SLOW_AFTER_S", 30.0)
    with anyio.fail_after(10):
        assert await runner.run_in_worker(slow, Budget(5_000), while_slow=while_slow) == "slow"
    assert events == []  # finished before it counted as slow: no task was started

    monkeypatch.setattr(runner, "SLOW_AFTER_S", 0.5)
    with anyio.fail_after(10), pytest.raises(BudgetExhausted):
        # Deaf to its budget: answered by the backstop after its deadline.
        await runner.run_in_worker(slow, Budget(100), while_slow=while_slow)
    assert events == []  # its deadline came before it could count as slow


async def test_work_that_misses_its_checkpoints_is_answered_and_keeps_its_slot() -> None:
    """The backstop: a stage that never reaches a checkpoint (an import, a loop without
    one) cannot hold the answer past the deadline; it keeps its slot until it stops."""
    release = threading.Event()
    stopped_work = threading.Event()
    slots = runner.admission_slots()

    def deaf(budget: Budget) -> str:
        release.wait(10)  # never looks at the budget
        stopped_work.set()
        return "late"

    with anyio.fail_after(5):
        while slots.in_use:  # an earlier test's abandoned work
            await anyio.sleep(0.01)
    before = runner.abandoned_calls
    try:
        budget = Budget(100)
        with anyio.fail_after(5), pytest.raises(BudgetExhausted) as stopped:
            await runner.run_in_worker(deaf, budget)
        assert stopped.value.cancelled is False
        assert not stopped_work.is_set()  # answered while the work still ran
        assert budget.cancelled  # told to stop at its next checkpoint
        assert runner.abandoned_calls == before + 1
        assert slots.in_use == 1  # its slot is still taken
        release.set()
        with anyio.fail_after(5):
            while slots.in_use:
                await anyio.sleep(0.01)
        assert stopped_work.is_set()
    finally:
        release.set()

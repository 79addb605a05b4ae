"""Solver slots: a bounded, first-come, budget-aware limit on concurrent Z3 solves."""

from __future__ import annotations

import threading
import time

import pytest

from prover.run.budget import Budget, BudgetExhausted
from prover.run.solver_slots import SolverSlots


def _holder(slots: SolverSlots, release: threading.Event, entered: threading.Event) -> None:
    with slots.hold(Budget(10_000)):
        entered.set()
        release.wait(5)


def _occupy(slots: SolverSlots, count: int) -> tuple[threading.Event, list[threading.Thread]]:
    release = threading.Event()
    threads = []
    for _ in range(count):
        entered = threading.Event()
        thread = threading.Thread(target=_holder, args=(slots, release, entered))
        thread.start()
        assert entered.wait(2)
        threads.append(thread)
    return release, threads


def test_no_more_solves_than_slots_run_at_once_and_a_freed_slot_is_taken_next() -> None:
    slots = SolverSlots(2)
    release, threads = _occupy(slots, 2)
    got: list[float] = []

    def wait_for_slot() -> None:
        with slots.hold(Budget(5_000)):
            got.append(time.monotonic())

    waiter = threading.Thread(target=wait_for_slot)
    waiter.start()
    time.sleep(0.1)
    assert got == [] and slots.in_use == 2
    freed_at = time.monotonic()
    release.set()
    waiter.join(2)
    for thread in threads:
        thread.join(2)
    assert len(got) == 1 and got[0] - freed_at < 0.5
    assert slots.in_use == 0


def test_a_waiter_stops_at_its_deadline_and_leaves_the_queue() -> None:
    slots = SolverSlots(1)
    release, threads = _occupy(slots, 1)
    try:
        started = time.monotonic()
        with pytest.raises(BudgetExhausted) as stopped, slots.hold(Budget(150)):
            pytest.fail("must not get the slot")
        assert not stopped.value.cancelled
        assert 0.14 <= time.monotonic() - started < 1.0
    finally:
        release.set()
        threads[0].join(2)
    with slots.hold(Budget(500)):  # the expired waiter no longer blocks the queue
        assert slots.in_use == 1


def test_cancelling_a_waiting_check_stops_it_within_100_ms() -> None:
    slots = SolverSlots(1)
    release, threads = _occupy(slots, 1)
    budget = Budget(10_000)
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            with slots.hold(budget):
                pass
        except BudgetExhausted as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.05)
    cancelled_at = time.monotonic()
    budget.cancel()
    waiter.join(2)
    stopped_after = time.monotonic() - cancelled_at
    release.set()
    threads[0].join(2)
    assert len(outcome) == 1 and isinstance(outcome[0], BudgetExhausted)
    assert outcome[0].cancelled
    assert stopped_after < 0.1


def test_waiters_are_served_first_come_first_served() -> None:
    slots = SolverSlots(1)
    release, threads = _occupy(slots, 1)
    order: list[int] = []

    def wait(index: int) -> None:
        with slots.hold(Budget(5_000)):
            order.append(index)

    waiters = []
    for index in range(5):
        thread = threading.Thread(target=wait, args=(index,))
        thread.start()
        waiters.append(thread)
        time.sleep(0.03)  # queue them in a known order
    release.set()
    for thread in [*threads, *waiters]:
        thread.join(3)
    assert order == [0, 1, 2, 3, 4]


def test_raising_the_capacity_lets_waiters_in_at_once() -> None:
    slots = SolverSlots(1)
    release, threads = _occupy(slots, 1)
    entered = threading.Event()
    waiter = threading.Thread(target=_holder, args=(slots, release, entered))
    waiter.start()
    assert not entered.wait(0.1)
    slots.set_capacity(2)
    assert entered.wait(1)
    release.set()
    for thread in [*threads, waiter]:
        thread.join(2)
    with pytest.raises(ValueError):
        slots.set_capacity(0)

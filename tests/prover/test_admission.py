"""Fair admission (issue 14): one client cannot hold more than its share of admission or
solver slots, and a freed slot goes to the client holding the fewest. Counted, not timed."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from prover.run import runner
from prover.run.admission import FairSlots, ShareBook, current_client
from prover.run.budget import Budget, BudgetExhausted
from prover.run.solver_slots import SolverSlots

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_client_holds_at_most_its_share_and_others_take_the_rest() -> None:
    slots = FairSlots(8, share=2)
    await slots.acquire("flood")
    await slots.acquire("flood")
    with anyio.move_on_after(0.2) as waited:
        await slots.acquire("flood")  # a third would exceed the share: it waits
    assert waited.cancelled_caught
    assert slots.held_by("flood") == 2 and slots.waiting == 0  # the cancelled waiter left
    for client in ("a", "b", "c"):
        await slots.acquire(client)  # admitted at once, without waiting
    assert slots.in_use == 5
    # The unnamed client (stdio, a library) has the whole pool.
    for _ in range(3):
        await slots.acquire(None)
    assert slots.in_use == 8


async def test_a_freed_slot_goes_to_the_client_holding_the_fewest() -> None:
    slots = FairSlots(2, share=2)
    await slots.acquire("flood")
    await slots.acquire("flood")
    order: list[str] = []

    async def wait(client: str) -> None:
        await slots.acquire(client)
        order.append(client)

    async with anyio.create_task_group() as tg:
        for client in ("flood", "flood", "quiet"):  # the flood queued first
            tg.start_soon(wait, client)
            await anyio.wait_all_tasks_blocked()
        assert slots.waiting == 3
        slots.release("flood")
        await anyio.wait_all_tasks_blocked()
        assert order == ["quiet"]  # holds 0 against the flood's 1
        slots.release("flood")
        slots.release("quiet")
        await anyio.wait_all_tasks_blocked()
    assert order == ["quiet", "flood", "flood"]


async def test_one_flooding_client_leaves_admission_to_the_others() -> None:
    """One client starts 20 checks that hold their worker; another client's check is
    admitted and answered while all of them still hold (the issue: 40 slow checks of one
    client filled all 32 admissions and everybody else waited for their deadline)."""
    release = threading.Event()
    running: list[str] = []
    runner.set_concurrency_limit(8)  # a share of 2 per client, 4 while 4 stay free
    answered: list[str] = []

    def slow(budget: Budget) -> None:
        running.append("flood")
        release.wait(10)

    async def flood_call() -> None:
        current_client.set("flood")
        try:
            await runner.run_in_worker(slow, Budget(10_000), input_bytes=10)
        except BudgetExhausted:
            pass

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(flood_call)
            with anyio.fail_after(5):
                while len(running) < 4:
                    await anyio.sleep(0.01)
            assert runner.admission_slots().held_by("flood") == 4

            async def other(name: str) -> None:
                current_client.set(name)
                answered.append(await runner.run_in_worker(lambda b: name, Budget(10_000)))

            with anyio.fail_after(5):
                async with anyio.create_task_group() as others:
                    for name in ("a", "b", "c"):
                        others.start_soon(other, name)
            assert sorted(answered) == ["a", "b", "c"]
            assert len(running) == 4  # the flood still holds what it had, no more
            assert not release.is_set()
            release.set()
    finally:
        release.set()
        runner.set_concurrency_limit(runner.DEFAULT_CONCURRENCY_LIMIT)


def _hold(slots: SolverSlots, client: str, release: threading.Event, log: list[str]) -> None:
    budget = Budget(10_000)
    budget.client = client
    try:
        with slots.hold(budget):
            log.append(client)
            release.wait(10)
    except BudgetExhausted:
        log.append(f"{client}: gave up")


def test_one_client_holds_at_most_half_of_the_solver_slots() -> None:
    slots = SolverSlots(2)
    release = threading.Event()
    log: list[str] = []
    threads = [
        threading.Thread(target=_hold, args=(slots, "flood", release, log)) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    while slots.in_use < 1:
        time.sleep(0.01)
    other = threading.Thread(target=_hold, args=(slots, "quiet", release, log))
    other.start()
    while slots.in_use < 2:
        time.sleep(0.01)
    assert log == ["flood", "quiet"]  # the flood's other two wait though a slot was free
    assert slots.held_by("flood") == 1
    release.set()
    for thread in [*threads, other]:
        thread.join(5)
    assert sorted(log) == ["flood", "flood", "flood", "quiet"]


def test_a_freed_solver_slot_goes_to_the_client_holding_the_fewest() -> None:
    slots = SolverSlots(1)
    first = threading.Event()
    log: list[str] = []
    holder = threading.Thread(target=_hold, args=(slots, "flood", first, log))
    holder.start()
    while slots.in_use < 1:
        time.sleep(0.01)
    later = threading.Event()
    waiters = [
        threading.Thread(target=_hold, args=(slots, client, later, log))
        for client in ("flood", "flood", "quiet")
    ]
    for thread in waiters:  # queued in this order
        thread.start()
        time.sleep(0.03)
    first.set()
    holder.join(5)
    while len(log) < 2:
        time.sleep(0.01)
    later.set()
    for thread in waiters:
        thread.join(5)
    # The flood had its turn: the quiet client goes next, though it queued last.
    assert log == ["flood", "quiet", "flood", "flood"]


def test_beyond_its_share_a_client_only_takes_the_spare_above_the_reserve() -> None:
    book = ShareBook(8, share=2, reserve=4)
    for _ in range(4):
        assert book.may_take("flood")
        book.take("flood")
    assert not book.may_take("flood")  # a fifth would leave only 3 free
    for name in ("a", "b"):
        assert book.may_take(name)  # within their shares: the reserve is theirs
        book.take(name)
    assert not book.may_take("flood")
    strict = ShareBook(8, share=2)
    strict.take("flood")
    strict.take("flood")
    assert not strict.may_take("flood")  # no reserve: the share is a hard cap

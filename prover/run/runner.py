"""Async face of the core: checks run in worker threads under a process-wide limit.

The event loop never blocks: a check runs in ``anyio.to_thread``; the loop only waits.
If the awaiting task is cancelled (a client cancelled the request, a transport dropped),
the check's budget is cancelled, which interrupts Z3, and the task waits — shielded — for
the thread to finish so that its slot is really free when the cancellation completes.
A watchdog interrupts the solvers when the deadline passes, in case a stage overruns it.

Limits apply at two levels. This module admits up to :func:`concurrency_limit` checks at
once, a bound on threads, and of those at most :data:`LARGE_CHECK_LIMIT` whose inputs are
over :data:`LARGE_INPUT_BYTES`, a bound on memory (reading two policies near the size
limits takes tens of megabytes). Inside a check only the Z3 stage takes one of the
:mod:`prover.run.solver_slots`, a bound on CPU. Most checks are decided in milliseconds of
plain Python, so admitting many at once lets them finish in proportion to their cost
(the interpreter is shared) instead of queueing behind another client's long solve.

Both admissions are shared fairly between clients (:mod:`prover.run.admission`): a client
named by :data:`~prover.run.admission.current_client` holds a quarter of the checks
admitted at once, and up to half while the other half stays free (and half of the large
ones), and a freed slot goes to the waiting client that holds the fewest. The client
travels with the budget to the solver slots.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from prover.api import BoundaryCheck, check_boundary, sha256_hex, z3_version
from prover.results import CheckOutcome, Receipt
from prover.run.admission import FairSlots, current_client, default_reserve, default_share
from prover.run.budget import DEFAULT_TIMEOUT_MS, Budget, BudgetExhausted

T = TypeVar("T")

_admission: FairSlots | None = None
_large_admission: FairSlots | None = None
#: Checks admitted at once. Below anyio's default pool of 40 worker threads, which the
#: server also uses for other blocking work.
DEFAULT_CONCURRENCY_LIMIT = 32
_limit = DEFAULT_CONCURRENCY_LIMIT
#: Inputs larger than this (all policy texts of a call together) count as large.
LARGE_INPUT_BYTES = 256 * 1024
#: Large checks admitted at once (each may hold tens of megabytes while reading).
LARGE_CHECK_LIMIT = max(1, os.cpu_count() or 1)

#: Extra time after the deadline before the watchdog interrupts a check's solvers.
WATCHDOG_GRACE_S = 0.01
#: How often the watchdog repeats the interrupt until the check stops.
WATCHDOG_REPEAT_S = 0.02
#: A call still running after this long starts its ``while_slow`` task.
SLOW_AFTER_S = 0.5
#: How long after its deadline a call whose work has not stopped is answered anyway
#: (``inconclusive``/``solver_timeout``); the work keeps its slots until it stops.
BACKSTOP_S = 0.06
#: Calls answered by the backstop since the process started (a stage that missed its
#: checkpoints: each is a bug to find).
abandoned_calls = 0


def _note_abandoned() -> None:
    global abandoned_calls
    abandoned_calls += 1
    import logging

    logging.getLogger(__name__).warning(
        "a call's work ran %.0f ms past its deadline without stopping; answered without "
        "it (%d so far)",
        BACKSTOP_S * 1000,
        abandoned_calls,
    )


def concurrency_limit() -> int:
    return _limit


def set_concurrency_limit(limit: int, client_share: int | None = None) -> None:
    """Set how many checks may run at once in this process (default 32), and how many of
    them one named client may hold (default: a quarter, and up to half while the other
    half is free)."""
    global _limit
    if limit < 1:
        raise ValueError("concurrency limit must be at least 1")
    if client_share is not None and client_share < 1:
        raise ValueError("client share must be at least 1")
    _limit = limit
    share = client_share if client_share is not None else default_share(limit)
    admission_slots().set_capacity(limit, share, max(share, default_reserve(limit)))


def admission_slots() -> FairSlots:
    """The process-wide admission of checks, shared fairly between clients."""
    global _admission
    if _admission is None:
        share = default_share(_limit)
        _admission = FairSlots(_limit, share, max(share, default_reserve(_limit)))
    return _admission


def large_admission_slots() -> FairSlots:
    """The admission of checks with large inputs (half of it per client)."""
    global _large_admission
    if _large_admission is None:
        _large_admission = FairSlots(LARGE_CHECK_LIMIT, max(1, LARGE_CHECK_LIMIT // 2))
    return _large_admission


def _seconds_left(budget: Budget) -> float:
    return max(0.0, budget.deadline - time.monotonic())


async def run_in_worker(
    func: Callable[[Budget], T],
    budget: Budget,
    *,
    input_bytes: int | None = None,
    while_slow: Callable[[], Awaitable[None]] | None = None,
) -> T:
    """Run ``func(budget)`` in a worker thread; cancellation and deadline interrupt it.

    ``input_bytes`` (the size of the texts ``func`` reads; unknown counts as large) picks
    the admission: a large check first waits for one of the few large-check tokens, so
    that waiting it holds nothing small checks need.

    ``while_slow`` (for instance progress notifications) is started when the call,
    admission included, has taken :data:`SLOW_AFTER_S`, and cancelled when it ends: a
    fast call starts no task for it.

    A call that is not admitted before its deadline (or is cancelled while waiting)
    never runs ``func``: :class:`~prover.run.budget.BudgetExhausted` is raised at the
    deadline, so no work runs late and none runs without a slot.
    """
    pools = [admission_slots()]
    if input_bytes is None or input_bytes > LARGE_INPUT_BYTES:
        pools.insert(0, large_admission_slots())
    client = current_client.get()
    if budget.client is None:
        budget.client = client  # the solver slots share between clients too
    result: list[T] = []
    failure: list[BaseException] = []
    done = anyio.Event()
    held: list[FairSlots] = []
    token = anyio.lowlevel.current_token()

    def finish() -> None:
        # On the event loop: the slots go back when the work has really stopped, even
        # if its caller was answered (and left) before that.
        for pool in reversed(held):
            pool.release(client)
        held.clear()
        done.set()

    def work() -> None:
        try:
            result.append(func(budget))
        except BaseException as exc:  # kept as a value: no ExceptionGroup wrapping
            failure.append(exc)
        finally:
            try:
                anyio.from_thread.run_sync(finish, token=token)
            except Exception:
                # The caller's event loop has ended (shutdown, or a test's loop): give
                # the slots back without waking waiters, which belong to no live loop;
                # the next acquire or release grants them.
                for pool in reversed(held):
                    pool.give_back_quietly(client)
                held.clear()

    async def worker() -> None:
        started = False
        try:
            # Wait for admission only until the deadline: a call queued past it is
            # answered then (the caller turns BudgetExhausted into inconclusive) and its
            # work never runs.
            with anyio.move_on_after(_seconds_left(budget)):
                for pool in pools:
                    await pool.acquire(client)
                    held.append(pool)
            if len(held) < len(pools):
                for pool in reversed(held):  # a large slot, held in vain
                    pool.release(client)
                held.clear()
                while not budget.expired and not budget.cancelled:
                    # The timer may fire a hair before the deadline; let it pass, so
                    # that the answer comes at the deadline, not a millisecond before.
                    await anyio.sleep(_seconds_left(budget))
                failure.append(BudgetExhausted(cancelled=budget.cancelled))
                return
            started = True
            # Abandoned (not waited for) only when the caller gives up on it: past the
            # backstop, or on cancellation once the work has stopped; ``finish`` frees
            # the slots from the thread's end either way.
            await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        finally:
            if not started:
                for pool in reversed(held):
                    pool.release(client)
                held.clear()
                done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(worker)
        try:
            slow = False
            if while_slow is not None and SLOW_AFTER_S < _seconds_left(budget):
                # (A call whose deadline comes first is never slow: it stops then.)
                with anyio.move_on_after(SLOW_AFTER_S):
                    await done.wait()
                if not done.is_set():
                    slow = True
                    tg.start_soon(while_slow)
            # The watchdog: past the deadline and a grace, interrupt the solvers until
            # the work stops (a solver can miss its own timeout).
            with anyio.move_on_after(_seconds_left(budget) + WATCHDOG_GRACE_S):
                await done.wait()
            while not done.is_set():
                if time.monotonic() >= budget.deadline + BACKSTOP_S:
                    # A stage that does not reach a checkpoint (a long import, a loop
                    # without one): answer now, stop it at its next checkpoint, and
                    # keep its slots until it has stopped.
                    _note_abandoned()
                    budget.cancel()
                    failure[:] = [BudgetExhausted(cancelled=False)]
                    tg.cancel_scope.cancel()
                    break
                budget.interrupt_solvers()
                with anyio.move_on_after(WATCHDOG_REPEAT_S):
                    await done.wait()
            if slow:
                tg.cancel_scope.cancel()  # the work is done: stop ``while_slow``
        except anyio.get_cancelled_exc_class():
            # Stop the thread before letting the cancellation finish, so that the slot
            # is free when the caller moves on. Repeat: an interrupt can be lost if it
            # lands between a stage's checkpoint and the start of ``Solver.check``.
            with anyio.CancelScope(shield=True):
                while not done.is_set():
                    budget.cancel()
                    with anyio.move_on_after(0.05):
                        await done.wait()
            raise
    if failure:
        raise failure[0]
    return result[0]


async def check_boundary_async(
    candidate: str | bytes,
    boundary: str | bytes,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    budget: Budget | None = None,
    environment: str | bytes | None = None,
    while_slow: Callable[[], Awaitable[None]] | None = None,
) -> BoundaryCheck:
    """``check_boundary`` in a worker thread, bounded by the process-wide limit
    (``while_slow``: see :func:`run_in_worker`)."""
    budget = budget or Budget(timeout_ms)
    try:
        return await run_in_worker(
            lambda b: check_boundary(candidate, boundary, budget=b, environment=environment),
            budget,
            input_bytes=text_bytes(candidate, boundary, environment),
            while_slow=while_slow,
        )
    except BudgetExhausted as stopped:
        # Never admitted: answered at the deadline without reading the policies.
        return BoundaryCheck(
            outcome=CheckOutcome.stopped(stopped.cancelled),
            receipt=Receipt(
                candidate_sha256=sha256_hex(candidate),
                boundary_sha256=sha256_hex(boundary),
                z3_version=z3_version(),
                elapsed_ms=round(budget.elapsed_ms(), 3),
                decided_by=None,
                environment_sha256=None if environment is None else sha256_hex(environment),
                assumptions=None if environment is None else (),
            ),
        )


def text_bytes(*texts: str | bytes | None) -> int:
    """The size of the texts a call reads; characters count as bytes, close enough for
    admission."""
    return sum(len(text) for text in texts if text is not None)


__all__ = [
    "DEFAULT_CONCURRENCY_LIMIT",
    "admission_slots",
    "check_boundary_async",
    "concurrency_limit",
    "large_admission_slots",
    "run_in_worker",
    "set_concurrency_limit",
    "text_bytes",
]

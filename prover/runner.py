"""Async face of the core: checks run in worker threads under a process-wide limit.

The event loop never blocks: a check runs in ``anyio.to_thread``; the loop only waits.
If the awaiting task is cancelled (a client cancelled the request, a transport dropped),
the check's budget is cancelled, which interrupts Z3, and the task waits — shielded — for
the thread to finish so that its slot is really free when the cancellation completes.
A watchdog interrupts the solvers when the deadline passes, in case a stage overruns it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from prover.api import BoundaryCheck, check_boundary
from prover.budget import DEFAULT_TIMEOUT_MS, Budget

T = TypeVar("T")

_limiter: anyio.CapacityLimiter | None = None
_limit = max(1, os.cpu_count() or 1)

#: Extra time after the deadline before the watchdog interrupts a check's solvers.
WATCHDOG_GRACE_S = 0.05


def set_concurrency_limit(limit: int) -> None:
    """Set how many checks may run at once in this process (default: CPU count)."""
    global _limit, _limiter
    if limit < 1:
        raise ValueError("concurrency limit must be at least 1")
    _limit = limit
    if _limiter is not None:
        _limiter.total_tokens = limit


def concurrency_limiter() -> anyio.CapacityLimiter:
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(_limit)
    return _limiter


async def run_in_worker(func: Callable[[Budget], T], budget: Budget) -> T:
    """Run ``func(budget)`` in a worker thread; cancellation and deadline interrupt it."""
    limiter = concurrency_limiter()
    result: list[T] = []
    failure: list[BaseException] = []
    done = anyio.Event()

    def work() -> None:
        try:
            result.append(func(budget))
        except BaseException as exc:  # kept as a value: no ExceptionGroup wrapping
            failure.append(exc)

    async def worker() -> None:
        try:
            # Wait for a slot only until the deadline: a call queued past it then runs
            # at once, finds its budget spent and answers inconclusive without solving,
            # instead of answering seconds late.
            acquired = False
            with anyio.move_on_after(budget.remaining_ms() / 1000.0):
                await limiter.acquire()
                acquired = True
            try:
                await anyio.to_thread.run_sync(work)
            finally:
                if acquired:
                    limiter.release()
        finally:
            done.set()

    async def watchdog() -> None:
        delay = max(0.0, budget.remaining_ms() / 1000.0) + WATCHDOG_GRACE_S
        with anyio.move_on_after(delay):
            await done.wait()
        while not done.is_set():
            budget.interrupt_solvers()
            with anyio.move_on_after(0.05):
                await done.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(worker)
        tg.start_soon(watchdog)
        try:
            await done.wait()
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
) -> BoundaryCheck:
    """``check_boundary`` in a worker thread, bounded by the process-wide limit."""
    budget = budget or Budget(timeout_ms)
    return await run_in_worker(lambda b: check_boundary(candidate, boundary, budget=b), budget)


__all__ = [
    "check_boundary_async",
    "concurrency_limiter",
    "run_in_worker",
    "set_concurrency_limit",
]

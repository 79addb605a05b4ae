"""A process-wide limit on Z3 solves running at once, shared by every check.

Most checks never reach Z3: the structural shortcut, the probes and the other domains
decide them in milliseconds of plain Python. A few keep Z3 busy until their deadline.
Limiting whole checks to the number of cores made the quick ones queue behind the slow
ones (under load a trivial check waited seconds for a slot held by a solve), so the
async runner admits many checks at once and only the solver stage takes one of these
slots. Z3 releases the GIL while it solves, so the slots are what bound CPU; the Python
stages share the interpreter and finish in proportion to their (small) cost.

Waiting is bounded by the check's budget: a check that cannot get a slot before its
deadline, or is cancelled while waiting, stops with :class:`BudgetExhausted`. Waiters are
served first come, first served.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from prover.budget import Budget, BudgetExhausted

#: How often a waiting check looks at its cancel flag (the cancel promise is 100 ms).
POLL_S = 0.02


class SolverSlots:
    """Counting slots with a first-come queue and budget-bounded waiting."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("solver slots must be at least 1")
        self._cond = threading.Condition()
        self._capacity = capacity
        self._in_use = 0
        self._queue: deque[object] = deque()

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def in_use(self) -> int:
        with self._cond:
            return self._in_use

    def set_capacity(self, capacity: int) -> None:
        """Change the limit; solves already running keep their slots."""
        if capacity < 1:
            raise ValueError("solver slots must be at least 1")
        with self._cond:
            self._capacity = capacity
            self._cond.notify_all()

    @contextmanager
    def hold(self, budget: Budget) -> Iterator[None]:
        """Hold one slot for the ``with`` block; raise ``BudgetExhausted`` if the budget
        runs out or is cancelled first."""
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            try:
                while not (self._queue[0] is ticket and self._in_use < self._capacity):
                    budget.checkpoint()
                    self._cond.wait(min(POLL_S, max(0.001, budget.remaining_ms() / 1000.0)))
                budget.checkpoint()
            except BudgetExhausted:
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._in_use += 1
            self._cond.notify_all()  # the next in line may take another free slot
        try:
            yield
        finally:
            with self._cond:
                self._in_use -= 1
                self._cond.notify_all()


_slots = SolverSlots(max(1, os.cpu_count() or 1))


def solver_slots() -> SolverSlots:
    """The slots every check of this process shares."""
    return _slots


def set_solver_slots(capacity: int) -> None:
    """How many Z3 solves may run at once in this process (default: CPU count)."""
    _slots.set_capacity(capacity)


__all__ = ["POLL_S", "SolverSlots", "set_solver_slots", "solver_slots"]

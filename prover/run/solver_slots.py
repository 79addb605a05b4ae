"""A process-wide limit on Z3 solves running at once, shared by every check.

Most checks never reach Z3: the structural shortcut, the probes and the other domains
decide them in milliseconds of plain Python. A few keep Z3 busy until their deadline.
Limiting whole checks to the number of cores made the quick ones queue behind the slow
ones (under load a trivial check waited seconds for a slot held by a solve), so the
async runner admits many checks at once and only the solver stage takes one of these
slots. Z3 releases the GIL while it solves, so the slots are what bound CPU; the Python
stages share the interpreter and finish in proportion to their (small) cost.

Waiting is bounded by the check's budget: a check that cannot get a slot before its
deadline, or is cancelled while waiting, stops with :class:`BudgetExhausted`.

The slots are shared fairly between clients (the budget's ``client``, see
:mod:`prover.run.admission`): a named client holds at most half of them, and a freed slot
goes to the waiter whose client holds the fewest; among equals, first come, first served.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

from prover.run.admission import ShareBook
from prover.run.budget import Budget, BudgetExhausted

#: How often a waiting check looks at its cancel flag (the cancel promise is 100 ms).
POLL_S = 0.02


def _share(capacity: int) -> int:
    return max(1, capacity // 2)


class SolverSlots:
    """Counting slots with per-client shares and budget-bounded waiting."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("solver slots must be at least 1")
        self._cond = threading.Condition()
        self._book = ShareBook(capacity, _share(capacity))
        self._waiting: dict[int, Hashable | None] = {}  # arrival -> client
        self._arrivals = itertools.count()

    @property
    def capacity(self) -> int:
        return self._book.capacity

    @property
    def in_use(self) -> int:
        with self._cond:
            return self._book.in_use

    def held_by(self, client: Hashable | None) -> int:
        with self._cond:
            return self._book.held.get(client, 0)

    def set_capacity(self, capacity: int) -> None:
        """Change the limit; solves already running keep their slots."""
        if capacity < 1:
            raise ValueError("solver slots must be at least 1")
        with self._cond:
            self._book.capacity = capacity
            self._book.share = _share(capacity)
            self._cond.notify_all()

    def _my_turn(self, arrival: int) -> bool:
        return self._book.next_waiter(self._waiting.items()) == arrival

    @contextmanager
    def hold(self, budget: Budget) -> Iterator[None]:
        """Hold one slot for the ``with`` block; raise ``BudgetExhausted`` if the budget
        runs out or is cancelled first."""
        client = budget.client
        with self._cond:
            arrival = next(self._arrivals)
            self._waiting[arrival] = client
            try:
                while not self._my_turn(arrival):
                    budget.checkpoint()
                    self._cond.wait(min(POLL_S, max(0.001, budget.remaining_ms() / 1000.0)))
                budget.checkpoint()
            except BudgetExhausted:
                del self._waiting[arrival]
                self._cond.notify_all()
                raise
            del self._waiting[arrival]
            self._book.take(client)
            self._cond.notify_all()  # the next in line may take another free slot
        try:
            yield
        finally:
            with self._cond:
                self._book.give_back(client)
                self._cond.notify_all()


_slots = SolverSlots(max(1, os.cpu_count() or 1))


def solver_slots() -> SolverSlots:
    """The slots every check of this process shares."""
    return _slots


def set_solver_slots(capacity: int) -> None:
    """How many Z3 solves may run at once in this process (default: CPU count)."""
    _slots.set_capacity(capacity)


__all__ = ["POLL_S", "SolverSlots", "set_solver_slots", "solver_slots"]

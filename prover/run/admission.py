"""Fair shares of a pool of slots between clients.

A *client* is whatever the caller names with :data:`current_client` (the HTTP server
names the connection or SSE session a call came from); ``None`` is the only client of
a process that serves one (stdio, a library user) and has no per-client cap.

Two rules make one client unable to starve the others:

- a named client holds at most its *share* of the slots at once, even when others are
  free: one client flooding slow checks leaves the rest of the pool to everyone else,
  so their quick checks are admitted at once instead of after the flood's deadlines;
  where a *reserve* is set, a client may hold more than its share, but only from the
  spare: it never takes a slot that would leave ``reserve`` or fewer free (so a client
  alone on a pool of 32 with a reserve of 16 uses 16, and newcomers find 16 free);
- when a slot frees, it goes to a waiter of the client that holds the fewest slots
  (first come, first served among equals), not to whoever queued first.

:class:`FairSlots` is the async form used for admission (:mod:`prover.run.runner`); the
solver slots (:mod:`prover.run.solver_slots`) apply the same rules to threads.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import anyio

#: The client on whose behalf the current task runs (``None``: the only client).
current_client: ContextVar[Hashable | None] = ContextVar("policy_prover_client", default=None)


#: Clients whose last turn is remembered for the round robin.
MAX_REMEMBERED_CLIENTS = 1024


def default_share(capacity: int) -> int:
    """A named client's share of ``capacity`` slots: a quarter, at least one."""
    return max(1, capacity // 4)


def default_reserve(capacity: int) -> int:
    """The admissions a client beyond its share leaves free: half of them."""
    return capacity // 2


class ShareBook:
    """Who holds how many slots, and which waiter is next (no locking, no waiting)."""

    def __init__(self, capacity: int, share: int | None = None, reserve: int | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.share = share if share is not None else default_share(capacity)
        #: Slots a client beyond its share must leave free (None: no going beyond it).
        self.reserve = reserve
        self.in_use = 0
        self.held: dict[Hashable | None, int] = {}
        # When each recent client was last given a slot (a bounded memory, oldest out).
        self._served: OrderedDict[Hashable | None, int] = OrderedDict()
        self._grants = itertools.count()

    def may_take(self, client: Hashable | None) -> bool:
        """Whether ``client`` may take a slot now (capacity and its share allowing)."""
        if self.in_use >= self.capacity:
            return False
        if client is None or self.held.get(client, 0) < self.share:
            return True
        return self.reserve is not None and self.capacity - self.in_use > self.reserve

    def take(self, client: Hashable | None) -> None:
        self.in_use += 1
        self.held[client] = self.held.get(client, 0) + 1
        self._served[client] = next(self._grants)
        self._served.move_to_end(client)
        if len(self._served) > MAX_REMEMBERED_CLIENTS:
            self._served.popitem(last=False)

    def give_back(self, client: Hashable | None) -> None:
        self.in_use -= 1
        left = self.held[client] - 1
        if left:
            self.held[client] = left
        else:
            del self.held[client]

    def next_waiter(self, waiters: Iterable[tuple[int, Hashable | None]]) -> int | None:
        """The arrival number of the waiter to serve next, of ``(arrival, client)``
        pairs; None if none may take a slot now.

        Fewest slots held by its client first; then round robin between clients (a
        client's second waiter after every other client's first, and the client served
        longest ago first); then arrival order.
        """
        seen: dict[Hashable | None, int] = {}
        best: tuple[int, int, int, int] | None = None
        for arrival, client in sorted(waiters, key=lambda pair: pair[0]):
            position = seen.get(client, 0)
            seen[client] = position + 1
            if not self.may_take(client):
                continue
            rank = (self.held.get(client, 0), position, self._served.get(client, -1), arrival)
            if best is None or rank < best:
                best = rank
        return None if best is None else best[3]


def _event() -> anyio.Event:
    # anyio only where a waiter waits: the solver's slots (ShareBook) are taken from
    # worker threads, and a CLI check that runs Z3 never loads the async stack.
    import anyio

    return anyio.Event()


@dataclass
class _Waiter:
    client: Hashable | None
    arrival: int
    event: anyio.Event = field(default_factory=_event)
    granted: bool = False


class FairSlots:
    """Async slots with per-client shares; waiting is cancellable (use a deadline)."""

    def __init__(self, capacity: int, share: int | None = None, reserve: int | None = None) -> None:
        self._book = ShareBook(capacity, share, reserve)
        self._waiters: list[_Waiter] = []
        self._arrivals = itertools.count()

    @property
    def capacity(self) -> int:
        return self._book.capacity

    @property
    def share(self) -> int:
        return self._book.share

    @property
    def in_use(self) -> int:
        return self._book.in_use

    def held_by(self, client: Hashable | None) -> int:
        return self._book.held.get(client, 0)

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def set_capacity(
        self, capacity: int, share: int | None = None, reserve: int | None = None
    ) -> None:
        """Change the pool (and the share, by default a quarter, and the reserve, by
        default none); holders keep theirs."""
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._book.capacity = capacity
        self._book.share = share if share is not None else default_share(capacity)
        self._book.reserve = reserve
        self._grant()

    async def acquire(self, client: Hashable | None) -> None:
        """Take a slot for ``client``, waiting for one if needed."""
        waiter = _Waiter(client, next(self._arrivals))
        self._waiters.append(waiter)
        self._grant()
        if waiter.granted:
            return  # a free slot: no need to wait (nor to yield) for it
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:
                self.release(client)
            else:
                self._waiters.remove(waiter)
            raise

    def release(self, client: Hashable | None) -> None:
        self._book.give_back(client)
        self._grant()

    def give_back_quietly(self, client: Hashable | None) -> None:
        """Release without granting: for a worker whose event loop has ended, so that
        no waiter's event is set from a foreign thread (the next release grants)."""
        self._book.give_back(client)

    def _grant(self) -> None:
        while self._waiters:
            arrival = self._book.next_waiter((w.arrival, w.client) for w in self._waiters)
            if arrival is None:
                return
            chosen = next(w for w in self._waiters if w.arrival == arrival)
            self._waiters.remove(chosen)
            self._book.take(chosen.client)
            chosen.granted = True
            chosen.event.set()


__all__ = ["FairSlots", "ShareBook", "current_client", "default_reserve", "default_share"]

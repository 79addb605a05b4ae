"""A thread-safe least-recently-used map, bounded by entries and by a size per entry.

The process-wide policy memo (:mod:`prover.policy.memo`) and the server's result cache
(:mod:`server.cache`) both keep values across calls with these bounds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedLru(Generic[K, V]):
    """At most ``entries`` values and ``total_size`` of their sizes (``None``: no size
    bound); the least recently used go first, and ``on_drop`` is told of every value
    that leaves (replaced, dropped or cleared). Counts hits and misses."""

    def __init__(
        self,
        entries: int,
        *,
        total_size: int | None = None,
        on_drop: Callable[[V], None] | None = None,
    ) -> None:
        self.entries = entries
        self.total_size = total_size
        self.on_drop = on_drop
        self.hits = 0
        self.misses = 0
        #: ``(value, size)`` by key, the least recently used first.
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for ``key``, if any (it becomes the most recently used)."""
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, key: K, value: V, size: int = 0) -> bool:
        """Keep ``value`` for ``key``; False (nothing kept) when no entry may be kept."""
        if self.entries <= 0:
            return False
        dropped: list[V] = []
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._held -= old[1]
                dropped.append(old[0])
            self._items[key] = (value, size)
            self._held += size
            while len(self._items) > self.entries or (
                self.total_size is not None and self._held > self.total_size
            ):
                _, (gone, gone_size) = self._items.popitem(last=False)
                self._held -= gone_size
                dropped.append(gone)
        self._dropped(dropped)
        return True

    def clear(self) -> None:
        with self._lock:
            dropped = [value for value, _ in self._items.values()]
            self._items.clear()
            self._held = 0
            self.hits = self.misses = 0
        self._dropped(dropped)

    def items(self) -> list[tuple[K, V]]:
        """Every entry, the least recently used first (for tests)."""
        with self._lock:
            return [(key, value) for key, (value, _) in self._items.items()]

    def __len__(self) -> int:
        return len(self._items)

    def _dropped(self, values: list[V]) -> None:
        if self.on_drop is not None:
            for value in values:
                self.on_drop(value)

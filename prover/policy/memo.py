"""Policies already loaded, by their exact text, for the life of the process.

A boundary check is usually one of many against the same boundary: a parent agent vets
every subagent policy against its own, a CI job checks many candidates against one
maximum, and explain re-reads the pair a check just read. Reading and validating a
policy is most of an ordinary check (a 16-rule policy: about 0.8 ms of 3), so the loaded
model is kept, keyed by the text itself (not a digest: equal keys are equal texts, with
no collision to reason about) and the reading (mainline or reference).

What is kept is a pure function of the key, and immutable: records and the schema's
models are frozen, and no stage edits a policy in place (``tests/prover/policy/
test_memo.py`` checks that every entry still equals a fresh load after whole checks).
Failures are not kept: an invalid policy is rare and a stopped read (deadline,
cancellation) says nothing about the text. Bounded by entries, by the size of one text
and by the text held in all, so that memory stays small whatever clients send; the
facts of a policy (:mod:`prover.policy.facts`) go when it goes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

#: Entries kept at most.
MAX_ENTRIES = 32
#: Longer texts are never kept (a 512-rule policy is about 130 KB).
MAX_TEXT_BYTES = 256 * 1024
#: Text held in all entries at most. A loaded policy with its facts takes about 27 times
#: its text (a 512-rule pair of 250 KB: 6.8 MB), so this holds some 30 MB at most.
MAX_TOTAL_BYTES = 1024 * 1024


class TextMemo(Generic[T]):
    """A thread-safe LRU map from ``(reading, text)`` to a value derived from the text."""

    def __init__(
        self,
        entries: int = MAX_ENTRIES,
        text_bytes: int = MAX_TEXT_BYTES,
        total_bytes: int = MAX_TOTAL_BYTES,
        on_drop: Callable[[T], None] | None = None,
    ) -> None:
        """``on_drop`` is told of every value that leaves (replaced, dropped, cleared)."""
        self.on_drop = on_drop
        self.entries = entries
        self.text_bytes = text_bytes
        self.total_bytes = total_bytes
        #: ``(value, size of the text)`` by key.
        self._items: OrderedDict[tuple[str, str | bytes], tuple[T, int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, reading: str, text: str | bytes) -> T | None:
        """The value kept for ``text`` under ``reading``, if any (it becomes the newest)."""
        if len(text) > self.text_bytes:
            return None
        key = (reading, text)
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, reading: str, text: str | bytes, value: T) -> bool:
        """Keep ``value`` for ``text``, dropping the oldest entries beyond the bounds;
        False (and nothing kept) for a text too long to keep."""
        size = len(text)
        if size > self.text_bytes or self.entries <= 0:
            return False
        key = (reading, text)
        dropped: list[T] = []
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._held -= old[1]
                dropped.append(old[0])
            self._items[key] = (value, size)
            self._held += size
            while len(self._items) > self.entries or self._held > self.total_bytes:
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

    def _dropped(self, values: list[T]) -> None:
        if self.on_drop is not None:
            for value in values:
                self.on_drop(value)

    def __len__(self) -> int:
        return len(self._items)

    def values(self) -> list[tuple[str, str | bytes, T]]:
        """Every entry as ``(reading, text, value)``, oldest first (for tests)."""
        with self._lock:
            return [(reading, text, entry[0]) for (reading, text), entry in self._items.items()]

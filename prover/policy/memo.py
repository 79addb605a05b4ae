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

from collections.abc import Callable
from typing import Generic, TypeVar

from prover.run.lru import BoundedLru

T = TypeVar("T")

#: Entries kept at most.
MAX_ENTRIES = 32
#: Longer texts are never kept (a 512-rule policy is about 130 KB).
MAX_TEXT_BYTES = 256 * 1024
#: Text held in all entries at most. A loaded policy with its facts takes about 27 times
#: its text (a 512-rule pair of 250 KB: 6.8 MB), so this holds some 30 MB at most.
MAX_TOTAL_BYTES = 1024 * 1024


class TextMemo(Generic[T]):
    """Values derived from a text, by ``(reading, text)``: a :class:`BoundedLru` whose
    entries are sized by their text, that never keeps a text over ``text_bytes``."""

    def __init__(
        self,
        entries: int = MAX_ENTRIES,
        text_bytes: int = MAX_TEXT_BYTES,
        total_bytes: int = MAX_TOTAL_BYTES,
        on_drop: Callable[[T], None] | None = None,
    ) -> None:
        """``on_drop`` is told of every value that leaves (replaced, dropped, cleared)."""
        self.text_bytes = text_bytes
        self._lru: BoundedLru[tuple[str, str | bytes], T] = BoundedLru(
            entries, total_size=total_bytes, on_drop=on_drop
        )

    @property
    def entries(self) -> int:
        return self._lru.entries

    @property
    def hits(self) -> int:
        return self._lru.hits

    def get(self, reading: str, text: str | bytes) -> T | None:
        """The value kept for ``text`` under ``reading``, if any."""
        if len(text) > self.text_bytes:
            return None
        return self._lru.get((reading, text))

    def put(self, reading: str, text: str | bytes, value: T) -> bool:
        """Keep ``value`` for ``text``; False (nothing kept) for a text too long."""
        if len(text) > self.text_bytes:
            return False
        return self._lru.put((reading, text), value, len(text))

    def clear(self) -> None:
        self._lru.clear()

    def __len__(self) -> int:
        return len(self._lru)

    def values(self) -> list[tuple[str, str | bytes, T]]:
        """Every entry as ``(reading, text, value)``, oldest first (for tests)."""
        return [(reading, text, value) for (reading, text), value in self._lru.items()]

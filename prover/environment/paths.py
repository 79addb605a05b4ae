"""Path resolution through the symlinks an environment document lists.

``resolve`` walks a path component by component as the kernel does: a component that is
a listed symlink is replaced by its target (an absolute target restarts at ``/``, a
relative one continues from the link's directory; ``..`` goes to the parent of what has
been resolved so far), and a component that is not listed is known to be no symlink only
where the evidence says so: at or beneath a ``symlinks_complete_beneath`` entry, or on
the way to one (entries are physical paths, so their ancestors are real directories).
Anything else leaves the path unresolved (``None``), as does a loop or a chain of more
than :data:`MAX_HOPS` links (the kernel's ``ELOOP`` limit).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

MAX_HOPS = 40


def _parent(path: str) -> str:
    head = path.rsplit("/", 1)[0]
    return head or "/"


def _join(directory: str, name: str) -> str:
    return "/" + name if directory == "/" else f"{directory}/{name}"


class PathResolver:
    """Resolves canonical absolute paths through listed symlinks, where evidence allows."""

    def __init__(self, symlinks: Mapping[str, str], complete_beneath: tuple[str, ...]) -> None:
        self._symlinks = dict(symlinks)
        self._complete = tuple(complete_beneath)
        self._on_the_way: set[str] = set()
        for root in self._complete:
            path = root
            while path != "/":
                path = _parent(path)
                self._on_the_way.add(path)
        self._complete_set = frozenset(self._complete)
        self._cache: dict[str, tuple[str | None, tuple[str, ...]]] = {}

    def known(self, path: str) -> bool:
        """Whether the evidence says which symlinks exist at ``path``."""
        if path == "/" or path in self._on_the_way:
            return True
        return self.narrowest_complete(path) is not None

    def narrowest_complete(self, path: str) -> str | None:
        """The deepest ``symlinks_complete_beneath`` entry at or above ``path``, or None.

        Walks ``path``'s ancestors (a set lookup each) rather than comparing it with
        every entry: with 10,000 entries that comparison made a check seconds late.
        """
        if not path.startswith("/"):
            return None
        probe = path
        while True:
            if probe in self._complete_set:
                return probe
            if probe == "/":
                return None
            probe = _parent(probe)

    def resolve(self, path: str) -> tuple[str | None, tuple[str, ...]]:
        """The resolved path (``None`` when unknown or looping) and the links followed."""
        cached = self._cache.get(path)
        if cached is None:
            cached = self._resolve(path)
            if len(self._cache) < 65_536:
                self._cache[path] = cached
        return cached

    def _resolve(self, path: str) -> tuple[str | None, tuple[str, ...]]:
        if not path.startswith("/") or "\x00" in path:
            return None, ()
        queue = deque(c for c in path.split("/") if c)
        done = "/"
        used: list[str] = []
        hops = 0
        # ``done`` lies at or beneath a complete entry: so does every child of it.
        inside = "/" in self._complete_set
        while queue:
            name = queue.popleft()
            if name == ".":
                continue
            if name == "..":
                done = _parent(done)
                inside = self.narrowest_complete(done) is not None
                continue
            nxt = _join(done, name)
            target = self._symlinks.get(nxt)
            if target is not None:
                hops += 1
                if hops > MAX_HOPS:
                    return None, tuple(used)
                used.append(nxt)
                if target.startswith("/"):
                    done = "/"
                inside = self.narrowest_complete(done) is not None
                queue.extendleft(reversed([c for c in target.split("/") if c]))
                continue
            if not inside:
                # No entry at or above ``done``: only ``nxt`` itself can be one.
                if nxt in self._complete_set:
                    inside = True
                elif nxt not in self._on_the_way:
                    return None, tuple(used)
            done = nxt
        return done, tuple(dict.fromkeys(used))

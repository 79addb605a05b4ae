"""Shrink a failing policy pair to a small one that still fails (greedy delta debugging).

Every list element and every mapping key of both documents is tried for removal, one at a
time, and kept out whenever the pair still shows the failure; rounds repeat until no
single removal keeps it. The result is what a regression test should pin.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from tests.soundness.generator import Document, render

StillFails = Callable[[str, str], bool]
Path = tuple[str | int, ...]


def _paths(node: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every removable location under ``node``, deepest first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
            if prefix or key != "version":
                yield (*prefix, key)
    elif isinstance(node, list):
        for index in reversed(range(len(node))):
            yield from _paths(node[index], (*prefix, index))
            yield (*prefix, index)


def _without(doc: Document, path: Path) -> Document:
    result = copy.deepcopy(doc)
    parent: Any = result
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return result


def shrink(
    candidate: Document, boundary: Document, still_fails: StillFails, *, max_checks: int = 2_000
) -> tuple[Document, Document]:
    """The smallest pair reachable by single removals for which ``still_fails`` holds."""
    docs = [copy.deepcopy(candidate), copy.deepcopy(boundary)]
    checks = 0
    progress = True
    while progress and checks < max_checks:
        progress = False
        for side in (0, 1):
            for path in list(_paths(docs[side])):
                try:
                    trial = _without(docs[side], path)
                except (KeyError, IndexError):
                    continue  # an earlier removal in this round moved it
                pair = [*docs]
                pair[side] = trial
                checks += 1
                if still_fails(render(pair[0]), render(pair[1])):
                    docs = pair
                    progress = True
                if checks >= max_checks:
                    break
    return docs[0], docs[1]

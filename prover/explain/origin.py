"""Field paths in the original candidate.

The fix rounds edit a working copy; a later violation's granting entries are found in
the copy as the earlier fixes left it, where list indices may have moved (an endpoint or
allow rule removed, an endpoint split in two). :func:`original_location` maps a location
in the working copy back through the edits made so far to the same entry in the original
candidate (``None`` for an entry an edit added, or inside a value an edit replaced).
"""

from __future__ import annotations

from collections.abc import Sequence

from prover.explain.document import Edit
from prover.policy.paths import Location


def original_location(location: Location, edits: Sequence[Edit]) -> Location | None:
    """Where the entry at ``location`` (after ``edits``) was in the original document."""
    parts = list(location)
    for edit in reversed(edits):
        target = edit.location
        parent, last = target[:-1], target[-1]
        if (
            edit.op == "replace"
            and len(parts) > len(target)
            and tuple(parts[: len(target)]) == tuple(target)
        ):
            return None  # inside a value an edit replaced as a whole
        depth = len(parent)
        under_parent = len(parts) > depth and tuple(parts[:depth]) == tuple(parent)
        if not isinstance(last, int):
            if edit.op == "add" and tuple(parts[: len(target)]) == tuple(target):
                return None
            continue
        if not under_parent or not isinstance(parts[depth], int):
            continue
        if edit.op == "remove" and parts[depth] >= last:
            parts[depth] += 1
        elif edit.op == "add":
            if parts[depth] == last:
                return None
            if parts[depth] > last:
                parts[depth] -= 1
    return tuple(parts)

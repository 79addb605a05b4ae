"""Field paths in the original candidate.

The fix rounds edit a working copy; a later violation's granting entries are found in
the copy as the earlier fixes left it, where list indices may have moved (an endpoint or
allow rule removed, an endpoint split in two) and values may have been replaced (an
endpoint's allow rules narrowed). :func:`original_location` maps a location in the
working copy back through the edits made so far to the same entry in the original
candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

from prover.explain.document import Edit
from prover.policy.paths import Location


def original_location(
    location: Location, edits: Sequence[Edit], *, nearest: bool = False
) -> Location | None:
    """Where the entry at ``location`` (after ``edits``) was in the original document.

    Exactly that entry, or ``None`` when an edit made it (added it, or replaced a value
    containing it). With ``nearest``, the closest original entry it derives from instead:
    the replaced value containing it, or the entry a narrowed copy (an ``add`` with an
    ``origin``) was made from; ``None`` only for an entry added from nothing."""
    parts = list(location)
    # After jumping from a narrowed copy to its origin: the removal of the origin and
    # the sibling copies made from it are skipped.
    pending: Location | None = None
    for edit in reversed(edits):
        target = edit.location
        if pending is not None:
            if edit.op == "add" and edit.origin == pending:
                continue
            if edit.op == "remove" and target == pending:
                pending = None
                continue
        parent, last = target[:-1], target[-1]
        if (
            edit.op == "replace"
            and len(parts) > len(target)
            and tuple(parts[: len(target)]) == tuple(target)
        ):
            if not nearest:
                return None  # inside a value an edit replaced as a whole
            parts = parts[: len(target)]
            continue
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
                if not nearest or edit.origin is None:
                    return None
                parts, pending = list(edit.origin), edit.origin
            elif parts[depth] > last:
                parts[depth] -= 1
    return tuple(parts)

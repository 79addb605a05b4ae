"""Rego's ``glob.match(pattern, delimiters, value)`` for the pattern syntax the oracle reads.

``*`` matches any run of characters other than a delimiter, ``**`` any run at all, ``?``
one non-delimiter character (gobwas/glob, which OPA and regorus follow). Character
classes, alternatives and escapes are unmodelled. Used with ``["."]`` for hosts and
``["/"]`` for paths and binaries (``sandbox-policy.rego``: ``endpoint_allowed``,
``binary_allowed``, ``path_matches``) and ``[]`` for query values
(``query_value_matches``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tests.soundness.sandbox_oracle.errors import Unmodelled


@lru_cache(maxsize=4096)
def _compile(pattern: str, delimiter: str) -> re.Pattern[str]:
    if any(ch in pattern for ch in "[]{}\\"):
        raise Unmodelled(f"glob syntax in {pattern!r}")
    out = []
    i = 0
    one = f"[^{re.escape(delimiter)}]" if delimiter else "."
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append(one + "*")
        elif ch == "?":
            out.append(one)
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def glob_match(pattern: str, delimiter: str, value: str) -> bool:
    return _compile(pattern, delimiter).fullmatch(value) is not None


def _instances(pattern: str, delimiter: str, labels: list[str]) -> set[str]:
    """Concrete values of ``pattern``: each wildcard replaced by a few fillers."""
    fillers = {"x", *labels}
    results = {""}
    pieces = re.split(r"(\*\*|\*|\?)", pattern)
    for piece in pieces:
        if piece == "**":
            options = {"", *fillers, f"x{delimiter}y" if delimiter else "xy"}
        elif piece in ("*", "?"):
            options = {"", *fillers} if piece == "*" else {"x"}
        else:
            options = {piece}
        results = {r + o for r in results for o in options}
        if len(results) > 4000:
            raise Unmodelled(f"pattern too wild to instantiate: {pattern!r}")
    return results


def patterns_overlap(left: str, right: str, delimiter: str) -> bool:
    """Some value matches both patterns. Decided by instantiating each pattern with
    the literal pieces of both; exact for the whole-label wildcards the oracle's
    campaign writes, and :class:`Unmodelled` when a partial wildcard leaves doubt."""
    labels = [p for p in re.split(r"[*?]|" + re.escape(delimiter or "/"), left + delimiter + right)]
    labels = [label for label in labels if label]
    for value in _instances(left, delimiter, labels) | _instances(right, delimiter, labels):
        if glob_match(left, delimiter, value) and glob_match(right, delimiter, value):
            return True
    if _partial(left, delimiter) or _partial(right, delimiter):
        raise Unmodelled(f"overlap of partial wildcards {left!r} and {right!r}")
    return False


def _partial(pattern: str, delimiter: str) -> bool:
    if not delimiter:
        return "*" in pattern or "?" in pattern
    return any(
        ("*" in seg or "?" in seg) and seg not in ("*", "**") for seg in pattern.split(delimiter)
    )

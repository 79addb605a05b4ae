"""DNS host patterns as the runtime compiles them (middleware selectors, explicit-TCP hosts).

Modelled on ``openshell-core/src/host_pattern.rs`` (``HostPattern::new``,
``HostSelector::new``, ``HostSelector::may_match_pattern``, ``HostPattern::overlaps``) at
OpenShell 2f7fb65: a pattern is split into DNS labels, ``**`` as a whole label consumes
one or more labels, and any other label is a ``glob`` crate (0.3) pattern matched
case-insensitively against one label. The validator uses these to refuse malformed
selectors and to find a middleware selector that may match a ``tls: skip`` endpoint.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from fnmatch import fnmatchcase

_WILDCARDS = "wildcards are either regular `*` or recursive `**`"
_RECURSIVE = "recursive wildcards must form a single path component"
_RANGE = "invalid range pattern"

#: A compiled label: None is ``**``; else (source, is_literal).
Label = tuple[str, bool] | None


def glob_pattern_error(pattern: str) -> str | None:
    """The ``glob::Pattern::new`` error for ``pattern`` (a single DNS label), if any."""
    chars = list(pattern)
    i = 0
    while i < len(chars):
        char = chars[i]
        if char == "*":
            start = i
            while i < len(chars) and chars[i] == "*":
                i += 1
            count = i - start
            if count > 2:
                return _syntax(start + 2, _WILDCARDS)
            if count == 2:
                # ``**`` must be a whole path component; a label has no separator.
                if i == 2 or chars[start - 1] == "/":
                    if i < len(chars) and chars[i] != "/":
                        return _syntax(i, _RECURSIVE)
                else:
                    return _syntax(start - 1, _RECURSIVE)
            continue
        if char == "[":
            if i + 4 <= len(chars) and chars[i + 1] == "!":
                if "]" in chars[i + 3 :]:
                    i += chars[i + 3 :].index("]") + 4
                    continue
            elif i + 3 <= len(chars) and chars[i + 1] != "!" and "]" in chars[i + 2 :]:
                i += chars[i + 2 :].index("]") + 3
                continue
            return _syntax(i, _RANGE)
        i += 1
    return None


def _syntax(position: int, message: str) -> str:
    return f"Pattern syntax error near position {position}: {message}"


@dataclass(frozen=True, slots=True)
class HostPattern:
    """A validated pattern: lower-cased source and its labels."""

    source: str
    labels: tuple[Label, ...]

    def literal(self) -> str | None:
        return self.source if all(lab is not None and lab[1] for lab in self.labels) else None

    def is_universal(self) -> bool:
        return self.labels == (None,)

    def matches(self, host: str) -> bool:
        parts = host.lower().split(".")
        if any(not part for part in parts):
            return False
        pending = [(0, 0)]
        seen: set[tuple[int, int]] = set()
        while pending:
            state = pending.pop()
            if state in seen:
                continue
            seen.add(state)
            p, h = state
            if p == len(self.labels) and h == len(parts):
                return True
            if p >= len(self.labels) or h >= len(parts):
                continue
            label = self.labels[p]
            if label is None:
                pending += [(p + 1, h + 1), (p, h + 1)]
            elif fnmatchcase(parts[h], label[0]):
                pending.append((p + 1, h + 1))
        return False

    def overlaps(self, other: HostPattern) -> bool:
        """Conservatively: some host may match both (each step consumes one label)."""
        pending = deque([(0, 0)])
        seen: set[tuple[int, int]] = set()
        while pending:
            state = pending.popleft()
            if state in seen:
                continue
            seen.add(state)
            i, j = state
            if i == len(self.labels) and j == len(other.labels):
                return True
            if i >= len(self.labels) or j >= len(other.labels):
                continue
            left, right = self.labels[i], other.labels[j]
            if left is None and right is None:
                pending += [(i + 1, j + 1), (i, j + 1), (i + 1, j)]
            elif left is None:
                pending += [(i + 1, j + 1), (i, j + 1)]
            elif right is None:
                pending += [(i + 1, j + 1), (i + 1, j)]
            elif _labels_may_overlap(left, right):
                pending.append((i + 1, j + 1))
        return False


def _labels_may_overlap(left: tuple[str, bool], right: tuple[str, bool]) -> bool:
    (left_source, left_literal), (right_source, right_literal) = left, right
    if left_literal and right_literal:
        return left_source == right_source
    if left_literal:
        return fnmatchcase(left_source, right_source)
    if right_literal:
        return fnmatchcase(right_source, left_source)
    return True


def host_pattern(pattern: str) -> HostPattern | str:
    """``HostPattern::new``: the compiled pattern, or the runtime's error text."""
    if not pattern:
        return "host pattern must not be empty"
    if any(char.isspace() for char in pattern):
        return "host pattern must not contain whitespace"
    if "{" in pattern or "}" in pattern:
        return "host pattern must not contain brace alternates; list each host pattern separately"
    source = pattern.lower() if pattern.isascii() else _ascii_lower(pattern)
    parts = source.split(".")
    if any(not part for part in parts):
        return "host pattern must not contain empty DNS labels"
    labels: list[Label] = []
    for part in parts:
        if part == "**":
            labels.append(None)
            continue
        error = glob_pattern_error(part)
        if error is not None:
            return f"invalid host pattern: {error}"
        labels.append((part, not any(char in "*?[" for char in part)))
    return HostPattern(source, tuple(labels))


def _ascii_lower(text: str) -> str:
    # Rust's ``to_ascii_lowercase`` leaves non-ASCII characters alone.
    return "".join(char.lower() if char.isascii() else char for char in text)


@dataclass(frozen=True, slots=True)
class HostSelector:
    includes: tuple[HostPattern, ...]
    excludes: tuple[HostPattern, ...]

    def may_match_pattern(self, candidate: HostPattern) -> bool:
        """``HostSelector::may_match_pattern``: may this selector match a host that
        ``candidate`` admits (exclusions count only where they surely cover it)."""
        for include in self.includes:
            if not include.overlaps(candidate):
                continue
            concrete = candidate.literal() or include.literal()
            if concrete is None:
                excluded = any(
                    e.is_universal() or e.source in (include.source, candidate.source)
                    for e in self.excludes
                )
            else:
                excluded = any(e.matches(concrete) for e in self.excludes)
            if not excluded:
                return True
        return False


def host_selector(include: list[str], exclude: list[str]) -> HostSelector | str:
    """``HostSelector::new``: the selector, or the first error text."""
    if not include:
        return "endpoint selector must include at least one host pattern"
    compiled: list[list[HostPattern]] = [[], []]
    for side, patterns in enumerate((include, exclude)):
        for pattern in patterns:
            result = host_pattern(pattern)
            if isinstance(result, str):
                return result
            compiled[side].append(result)
    return HostSelector(tuple(compiled[0]), tuple(compiled[1]))

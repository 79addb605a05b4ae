"""Does some string match both of two glob patterns? (A product-automaton search.)

Tokens: a literal character, ``ANY1`` (one character: ``?`` or a character class, the
class over-approximated as any character), and stars that match any run of characters
— either excluding the delimiter (``*`` in host labels) or including it. Both patterns
advance together over one chosen character; a star may also be skipped. The state space
is the product of the two token positions, so the search is small and always finishes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class Star:
    crosses: bool


ANY1 = "\x00any"
Token = str | Star


def host_tokens(pattern: str) -> tuple[Token, ...]:
    """Host glob: ``**`` (any run) crosses ``.``, a single ``*`` does not."""
    tokens: list[Token] = []
    index = 0
    while index < len(pattern):
        if pattern[index] == "*":
            run = index
            while index < len(pattern) and pattern[index] == "*":
                index += 1
            tokens.append(Star(crosses=index - run >= 2))
        else:
            tokens.append(pattern[index])
            index += 1
    return tuple(tokens)


def runtime_path_tokens(pattern: str) -> tuple[Token, ...]:
    """Endpoint ``path`` selector glob: every star crosses ``/``; ``?``/``[..]`` is one char."""
    tokens: list[Token] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            while index < len(pattern) and pattern[index] == "*":
                index += 1
            tokens.append(Star(crosses=True))
            continue
        if char == "?":
            tokens.append(ANY1)
        elif char == "[" and "]" in pattern[index + 2 :]:
            index = pattern.index("]", index + 2)
            tokens.append(ANY1)
        else:
            tokens.append(char)
        index += 1
    return tuple(tokens)


def _accepts(token: Token, char: str | None, delimiter: str) -> bool:
    if isinstance(token, Star):
        return token.crosses or char != delimiter
    if token == ANY1:
        return True
    return token == char


@lru_cache(maxsize=8192)
def languages_overlap(
    left: tuple[Token, ...], right: tuple[Token, ...], delimiter: str, nonempty: bool = False
) -> bool:
    """Whether some string (non-empty if asked) is in both token languages."""
    start = (0, 0, False)
    stack, seen = [start], {start}
    while stack:
        i, j, consumed = stack.pop()
        if i == len(left) and j == len(right) and (consumed or not nonempty):
            return True
        moves: list[tuple[int, int, bool]] = []
        if i < len(left) and isinstance(left[i], Star):
            moves.append((i + 1, j, consumed))
        if j < len(right) and isinstance(right[j], Star):
            moves.append((i, j + 1, consumed))
        if i < len(left) and j < len(right):
            named = {t for t in (left[i], right[j]) if isinstance(t, str) and t != ANY1}
            for char in (*named, delimiter, None):  # None: a character no pattern names
                if _accepts(left[i], char, delimiter) and _accepts(right[j], char, delimiter):
                    next_i = i if isinstance(left[i], Star) else i + 1
                    next_j = j if isinstance(right[j], Star) else j + 1
                    moves.append((next_i, next_j, True))
        for move in moves:
            if move not in seen:
                seen.add(move)
                stack.append(move)
    return False

"""Do two host globs match a common host?

The reference refuses two endpoints on one port when their hosts are equal or either
has a ``*`` (spec §5 step 4): a wildcard "overlaps" every host, so ``github.com`` and
``*.githubusercontent.com`` count as overlapping although no host matches both. The
runtime's choice between endpoints only matters for a connection that both match, so the
extended analysis asks the exact question instead: is the intersection of the two host
languages (spec §9.2: ``*`` is any run of characters other than ``.``, ``**`` any run at
all, everything else literal; patterns are lower-cased) non-empty?

Decided by a breadth-first search over pairs of pattern positions; the alphabet that
matters is the literal characters of the two patterns, ``.`` and one stand-in for every
other character.
"""

from __future__ import annotations

from functools import lru_cache

ANY_HOST = "**"
"""The pattern of a hostless endpoint (``allowed_ips`` without a host): every host."""

_STAR, _DOUBLE = "*", "**"
_OTHER = "\x00"  # a character that is literal in neither pattern and not a dot


def _tokens(pattern: str) -> tuple[str, ...]:
    tokens: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            tokens.append(_DOUBLE)
            while index < len(pattern) and pattern[index] == "*":
                index += 1
            continue
        tokens.append(_STAR if pattern[index] == "*" else pattern[index])
        index += 1
    return tuple(tokens)


def _closure(tokens: tuple[str, ...], position: int) -> list[int]:
    """Positions reachable without reading a character (a wildcard may be empty)."""
    reached = [position]
    while position < len(tokens) and tokens[position] in (_STAR, _DOUBLE):
        position += 1
        reached.append(position)
    return reached


def _step(tokens: tuple[str, ...], position: int, char: str) -> list[int]:
    if position >= len(tokens):
        return []
    token = tokens[position]
    if token == _DOUBLE or (token == _STAR and char != "."):
        return _closure(tokens, position)  # the wildcard stays, or ends after this char
    if token == char:
        return _closure(tokens, position + 1)
    return []


def _heads_agree(first: str, second: str) -> bool:
    head_a, head_b = first.split("*", 1)[0], second.split("*", 1)[0]
    shorter = min(len(head_a), len(head_b))
    return head_a[:shorter] == head_b[:shorter]


def literal_ends_agree(first: str, second: str) -> bool:
    """The literal starts of two patterns (up to their first ``*``) agree where both
    have a character, and so do their literal ends (after their last ``*``): a string
    matching both begins and ends with both. A necessary condition for any common
    match, and cheap: it settles most pairs of distinct wildcard hosts without a search."""
    return _heads_agree(first, second) and _heads_agree(first[::-1], second[::-1])


@lru_cache(maxsize=65536)
def hosts_intersect(first: str, second: str) -> bool:
    """Whether some host matches both lower-cased host globs."""
    if first == second or ANY_HOST in (first, second):
        return True
    if "*" not in first and "*" not in second:
        return False  # two exact hosts: each matches only itself
    if not literal_ends_agree(first, second):
        return False
    a, b = _tokens(first), _tokens(second)
    alphabet = {t for t in a + b if t not in (_STAR, _DOUBLE)} | {".", _OTHER}
    start = [(i, j) for i in _closure(a, 0) for j in _closure(b, 0)]
    seen = set(start)
    frontier = list(start)
    while frontier:
        i, j = frontier.pop()
        if i == len(a) and j == len(b):
            return True
        for char in alphabet:
            for ni in _step(a, i, char):
                for nj in _step(b, j, char):
                    if (ni, nj) not in seen:
                        seen.add((ni, nj))
                        frontier.append((ni, nj))
    return False

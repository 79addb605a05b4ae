"""Exact relations between glob languages, decided in Python by automata.

Both glob kinds of spec §9.2 are sequences of four elements: a literal character, a run
without the separator (``*`` in a host label or a path segment), any string (``**``
hosts, a last ``**`` path segment, the pattern ``**``) and "zero or more whole
directories" (a ``**`` path segment followed by more: ``""`` or any string ending in
``/``). The languages are the ones :mod:`prover.encode.globs` compiles for Z3 (the tests
compare both), over Z3's whole alphabet.

Only the characters written in the two patterns, the separators and ``/`` can be told
apart by these automata; every other character behaves like any other, so one stand-in
``OTHER`` represents them all and the product automaton over this small alphabet decides
emptiness, inclusion and overlap exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

MAX_STATES = 20_000


@dataclass(frozen=True, slots=True)
class Element:
    kind: str  # "lit", "run", "any", "dirs"
    char: str = ""  # the literal, or the separator of a run


@lru_cache(maxsize=8192)
def host_elements(pattern: str) -> tuple[Element, ...]:
    if pattern == "**":
        return (Element("any"),)
    out: list[Element] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(Element("any"))
            i += 2
        elif pattern[i] == "*":
            out.append(Element("run", "."))
            i += 1
        else:
            out.append(Element("lit", pattern[i]))
            i += 1
    return tuple(out)


@lru_cache(maxsize=8192)
def path_elements(pattern: str) -> tuple[Element, ...]:
    if pattern == "**":
        return (Element("any"),)
    segments = pattern.split("/")
    out: list[Element] = []
    i = 0
    while i < len(segments):
        segment = segments[i]
        if segment == "**":
            while i + 1 < len(segments) and segments[i + 1] == "**":
                i += 1
            out.append(Element("dirs") if i + 1 < len(segments) else Element("any"))
        else:
            out.extend(Element("run", "/") if c == "*" else Element("lit", c) for c in segment)
            if i + 1 < len(segments):
                out.append(Element("lit", "/"))
        i += 1
    return tuple(out)


def literal_elements(text: str) -> tuple[Element, ...]:
    return tuple(Element("lit", c) for c in text)


class _Nfa:
    """States ``0..n`` (``n`` accepts) plus ``n + 1 + i``: inside the ``dirs`` element
    ``i`` after at least one character."""

    def __init__(self, elements: tuple[Element, ...]) -> None:
        self.elements = elements
        self.accept = len(elements)
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def closure(self, states: frozenset[int]) -> frozenset[int]:
        out = set(states)
        stack = list(states)
        while stack:
            state = stack.pop()
            if state < self.accept and self.elements[state].kind in ("run", "any", "dirs"):
                if state + 1 not in out:
                    out.add(state + 1)
                    stack.append(state + 1)
        return frozenset(out)

    def step(self, states: frozenset[int], char: str) -> frozenset[int]:
        key = (states, char)
        cached = self._steps.get(key)
        if cached is None:
            cached = self._step(states, char)
            self._steps[key] = cached
        return cached

    def _step(self, states: frozenset[int], char: str) -> frozenset[int]:
        n = self.accept
        out: set[int] = set()
        for state in states:
            if state > n:  # inside dirs element i
                i = state - n - 1
                out.add(state)
                if char == "/":
                    out.add(i + 1)
                continue
            if state == n:
                continue
            element = self.elements[state]
            if element.kind == "lit":
                if char == element.char:
                    out.add(state + 1)
            elif element.kind == "run":
                if char != element.char:
                    out.add(state)
            elif element.kind == "any":
                out.add(state)
            else:  # dirs
                out.add(n + 1 + state)
                if char == "/":
                    out.add(state + 1)
        return self.closure(frozenset(out))

    def accepts(self, states: frozenset[int]) -> bool:
        return self.accept in states

    def start(self) -> frozenset[int]:
        return self.closure(frozenset((0,)))


def _alphabet(*patterns: tuple[Element, ...]) -> list[str]:
    """The characters the automata can tell apart, plus one stand-in for all others."""
    chars = {e.char for elements in patterns for e in elements if e.char}
    chars.update(("/", "."))
    other = next(chr(c) for c in range(0x100, 0x110000) if chr(c) not in chars)
    return [*sorted(chars), other]


@dataclass(frozen=True, slots=True)
class Comparison:
    """What the product automaton of two languages A and B can reach."""

    both: bool  # some string in A and in B
    only_left: bool  # some string in A and not in B
    only_right: bool  # some string in B and not in A


def _literal_ends(elements: tuple[Element, ...]) -> tuple[str, str]:
    """The literal text every matched string starts and ends with."""
    kinds = [e.kind for e in elements]
    first = next((i for i, k in enumerate(kinds) if k != "lit"), len(elements))
    last = next((i for i in range(len(kinds) - 1, -1, -1) if kinds[i] != "lit"), -1)
    prefix = "".join(e.char for e in elements[:first])
    suffix = "".join(e.char for e in elements[last + 1 :]) if last >= 0 else prefix
    return prefix, suffix


def compare(left: tuple[Element, ...], right: tuple[Element, ...]) -> Comparison | None:
    """Exact comparison, or ``None`` if the product grew beyond :data:`MAX_STATES`."""
    (lp, ls), (rp, rs) = _literal_ends(left), _literal_ends(right)
    compatible = (lp.startswith(rp) or rp.startswith(lp)) and (ls.endswith(rs) or rs.endswith(ls))
    if not compatible:  # no string starts (or ends) with both: disjoint, both non-empty
        return Comparison(both=False, only_left=True, only_right=True)
    # A common literal prefix or suffix cancels out exactly (uS ⊆ vS ⇔ u ⊆ v for one
    # fixed string S), which keeps the product small: "*.svc1.example.com" against
    # "**.svc1.example.com" becomes "*" against "**".
    front = min(len(lp), len(rp))
    left, right = left[front:], right[front:]
    (_, ls), (_, rs) = _literal_ends(left), _literal_ends(right)
    back = min(len(ls), len(rs))
    if back:
        left, right = left[: len(left) - back], right[: len(right) - back]
    a, b = _Nfa(left), _Nfa(right)
    alphabet = _alphabet(left, right)
    start = (a.start(), b.start())
    seen = {start}
    stack = [start]
    both = only_left = only_right = False
    while stack:
        sa, sb = stack.pop()
        in_a, in_b = a.accepts(sa), b.accepts(sb)
        both |= in_a and in_b
        only_left |= in_a and not in_b
        only_right |= in_b and not in_a
        if both and only_left and only_right:
            break
        for char in alphabet:
            nxt = (a.step(sa, char), b.step(sb, char))
            if not nxt[0] and not nxt[1]:
                continue
            if nxt not in seen:
                if len(seen) >= MAX_STATES:
                    return None
                seen.add(nxt)
                stack.append(nxt)
    return Comparison(both, only_left, only_right)


def matches(elements: tuple[Element, ...], text: str) -> bool:
    nfa = _Nfa(elements)
    states = nfa.start()
    for char in text:
        states = nfa.step(states, char)
        if not states:
            return False
    return nfa.accepts(states)

"""Exact language containment of two globs (spec §9.2), decided without Z3.

``host_within(inner, outer)`` is true only when every host ``inner`` matches is matched by
``outer``; likewise ``path_within`` (endpoint and REST-rule paths, ``""`` = any path)
and ``binary_within`` (binary globs). A ``False`` means "not proved", never "disjoint":
the callers then let the probes and Z3 decide.

Each glob is compiled to a small nondeterministic automaton that reads one character at a
time, from the elements :mod:`prover.encode.automata` reads the grammar of §9.2 into (the
same reading as the Z3 encoding's; the tests check both against the independent
ground-truth matchers of :mod:`prover.concrete.glob`):

* host: ``**`` any string, ``*`` a run without ``.``, other characters literal; the
  pattern exactly ``**`` is any string;
* path / binary, per ``/``-segment: a segment exactly ``**`` (consecutive ones collapse)
  is "the empty string or any string ending in ``/``" in the middle and any string at
  the end; in any other segment each ``*`` is a run without ``/``.

Containment ``L(inner) ⊆ L(outer)`` is decided by exploring the product of the two
automata, both determinised on the fly, over a finite alphabet: every character either
pattern mentions, both separators, and one *other* character standing for all the rest
(both automata treat every unmentioned character alike, so a word over the full
alphabet is accepted iff its image over the small one is). The exploration is exact; it
gives up (``False``) only past :data:`MAX_PAIRS` product states.

Hosts are case-insensitive: the runtime compares ``lower(pattern)`` with ``lower(host)``,
so comparing the lower-cased patterns over lower-cased names is sufficient. Paths and
binaries are compared on the action domain only (spec §9.1: both start with ``/``), so
``""`` (any path) is within ``/**``.

Before the automata, common wildcard-free ends are cut off (host characters; whole path
segments), which keeps the automata tiny for the usual ``*.svc.example.com`` within
``**.svc.example.com`` and ``/data/*/x/**`` within ``/data/**``; each cut is justified
where it is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from prover.encode.automata import Element, host_elements, path_elements

MAX_PAIRS = 20_000
"""Product states explored before giving up (``False``: not proved)."""

_LIT, _NOT, _ANY = 0, 1, 2


@dataclass(frozen=True, slots=True)
class _Automaton:
    """An ε-NFA: ``moves[s]`` are ``(kind, char, target)`` with kind literal (``char``),
    not-``char``, or any; ``skips[s]`` are ε-targets; ``final`` the accepting state."""

    moves: tuple[tuple[tuple[int, str, int], ...], ...]
    skips: tuple[tuple[int, ...], ...]
    final: int
    literals: frozenset[str]


class _Builder:
    def __init__(self) -> None:
        self.moves: list[list[tuple[int, str, int]]] = [[]]
        self.skips: list[list[int]] = [[]]
        self.literals: set[str] = set()
        self.head = 0

    def _new(self) -> int:
        self.moves.append([])
        self.skips.append([])
        return len(self.moves) - 1

    def literal(self, char: str) -> None:
        target = self._new()
        self.moves[self.head].append((_LIT, char, target))
        self.literals.add(char)
        self.head = target

    def run(self, kind: int, sep: str = "") -> None:
        """A possibly empty run of characters (of any kind, or other than ``sep``)."""
        loop, target = self._new(), self._new()
        self.skips[self.head].append(loop)
        self.moves[loop].append((kind, sep, loop))
        self.skips[loop].append(target)
        self.head = target

    def dirs(self) -> None:
        """The empty string, or any string that ends with ``/``."""
        loop, target = self._new(), self._new()
        self.skips[self.head].extend((loop, target))
        self.moves[loop].append((_ANY, "", loop))
        self.moves[loop].append((_LIT, "/", target))
        self.head = target

    def done(self) -> _Automaton:
        return _Automaton(
            moves=tuple(tuple(m) for m in self.moves),
            skips=tuple(tuple(s) for s in self.skips),
            final=self.head,
            literals=frozenset(self.literals),
        )


def _compile(elements: tuple[Element, ...]) -> _Automaton:
    """The automaton of a glob's elements (the grammar of :mod:`prover.encode.automata`,
    which the Z3 encoding reads too)."""
    build = _Builder()
    for element in elements:
        if element.kind == "lit":
            build.literal(element.char)
        elif element.kind == "run":
            build.run(_NOT, element.char)
        elif element.kind == "dirs":
            build.dirs()
        else:
            build.run(_ANY)
    return build.done()


@lru_cache(maxsize=4096)
def _host_automaton(pattern: str) -> _Automaton:
    return _compile(host_elements(pattern))


@lru_cache(maxsize=4096)
def _path_automaton(pattern: str) -> _Automaton:
    return _compile(path_elements(pattern))


def _closure(auto: _Automaton, states: frozenset[int] | set[int]) -> frozenset[int]:
    seen = set(states)
    stack = list(states)
    while stack:
        for target in auto.skips[stack.pop()]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return frozenset(seen)


def _step(auto: _Automaton, states: frozenset[int], char: str) -> frozenset[int]:
    reached: set[int] = set()
    for state in states:
        for kind, value, target in auto.moves[state]:
            if kind == _ANY or (char == value if kind == _LIT else char != value):
                reached.add(target)
    return _closure(auto, reached) if reached else frozenset()


def _other_character(used: set[str]) -> str:
    code = 0x10FFFF
    while chr(code) in used:
        code -= 1
    return chr(code)


def _contained(inner: _Automaton, outer: _Automaton, *, rooted: bool) -> bool:
    """``L(inner) ⊆ L(outer)``; with ``rooted`` only for words starting with ``/``."""
    alphabet = set(inner.literals | outer.literals) | {".", "/"}
    alphabet.add(_other_character(alphabet))
    letters = sorted(alphabet)
    left, right = _closure(inner, {0}), _closure(outer, {0})
    if rooted:  # the action domain: only words that start with "/" count
        left, right = _step(inner, left, "/"), _step(outer, right, "/")
        if not left:
            return True
    start = (left, right)
    seen = {start}
    stack = [start]
    while stack:
        left, right = stack.pop()
        if inner.final in left and outer.final not in right:
            return False
        for char in letters:
            nxt_left = _step(inner, left, char)
            if not nxt_left:
                continue
            pair = (nxt_left, _step(outer, right, char))
            if pair not in seen:
                if len(seen) >= MAX_PAIRS:
                    return False
                seen.add(pair)
                stack.append(pair)
    return True


def _common_literal_ends(inner: str, outer: str) -> tuple[str, str]:
    """Both patterns without their longest common wildcard-free prefix and suffix.

    Sound for host globs: each pattern's language is ``prefix · L(rest) · suffix``
    (tokens are per character and the cut ends never split a ``**``), so the rests'
    containment implies the patterns'. At least one character of each is kept.
    """
    limit = min(len(inner), len(outer)) - 1
    start = 0
    while start < limit and inner[start] == outer[start] and inner[start] != "*":
        start += 1
    end = 0
    while end < limit - start and inner[-1 - end] == outer[-1 - end] and inner[-1 - end] != "*":
        end += 1
    return inner[start : len(inner) - end], outer[start : len(outer) - end]


@lru_cache(maxsize=8192)
def _hosts_within(inner: str, outer: str) -> bool:
    if inner == outer or outer == "**":
        return True
    if "*" not in outer:
        return False  # a glob with a wildcard matches infinitely many names
    return _contained(_host_automaton(inner), _host_automaton(outer), rooted=False)


@lru_cache(maxsize=16384)
def host_within(inner: str, outer: str) -> bool:
    """Every host matched by glob ``inner`` is matched by glob ``outer`` (case-insensitive)."""
    inner, outer = inner.lower(), outer.lower()
    if inner == outer or outer == "**":
        return True
    if "*" not in outer:
        return False
    return _hosts_within(*_common_literal_ends(inner, outer))


def _common_segments(inner: str, outer: str) -> tuple[str, str, bool]:
    """Both path patterns without their common leading wildcard-free segments, and
    whether any were cut. Sound: path tokens are per segment, so a pattern whose first
    ``k`` segments are literal has the language ``"s1/…/sk/" · L(rest)``, as long as
    ``rest`` keeps at least one segment of each."""
    left, right = inner.split("/"), outer.split("/")
    cut = 0
    limit = min(len(left), len(right)) - 1
    while cut < limit and left[cut] == right[cut] and "*" not in left[cut]:
        cut += 1
    return "/".join(left[cut:]), "/".join(right[cut:]), cut > 0


@lru_cache(maxsize=8192)
def _rooted_within(inner: str, outer: str) -> bool:
    if inner == outer or outer in ("**", "/**"):
        return True
    if "*" not in outer:
        return False
    inner_rest, outer_rest, cut = _common_segments(inner, outer)
    # Plain containment of the rests implies that of the whole patterns (and so on the
    # action domain); without a cut, only words that start with "/" count.
    if cut and (inner_rest == outer_rest or outer_rest == "**"):
        return True
    inner_auto = _path_automaton(inner_rest if cut else inner)
    outer_auto = _path_automaton(outer_rest if cut else outer)
    return _contained(inner_auto, outer_auto, rooted=not cut)


def binary_within(inner: str, outer: str) -> bool:
    """Every binary of the action domain (spec §9.1: it matches ``/**``, so it starts
    with ``/``) that glob ``inner`` matches is matched by glob ``outer``."""
    return _rooted_within(inner, outer)


def path_within(inner: str, outer: str) -> bool:
    """Every action path (it starts with ``/``, spec §9.1) that path glob ``inner``
    matches is matched by ``outer``; ``""`` means any path."""
    return _rooted_within(inner or "**", outer or "**")


def accepts(pattern: str, subject: str, *, host: bool) -> bool:
    """Whether the automaton of ``pattern`` accepts ``subject`` (exposed for the tests
    that compare this reading of the spec with the ground-truth matchers)."""
    if host:
        auto, subject = _host_automaton(pattern.lower()), subject.lower()
    else:
        auto = _path_automaton(pattern)
    states = _closure(auto, {0})
    for char in subject:
        states = _step(auto, states, char)
        if not states:
            return False
    return auto.final in states

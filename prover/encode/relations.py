"""How the languages of two string atoms of the same field relate: equal, one inside the
other, disjoint, or overlapping.

These facts become clauses over the atoms (``a → b`` for ``L(a) ⊆ L(b)``, ``¬a ∨ ¬b`` for
disjoint languages). They follow from the atoms' meaning, so they change no answer;
they spare the lazy string search most of its rounds.

Relations are decided exactly in Python by :mod:`prover.encode.automata` (a product
automaton over the few characters the patterns can tell apart): about 2,000 pairs of
wildcard hosts cost 7 s as Z3 emptiness checks and a fraction of that here. Only a
product too large to explore falls back to Z3 emptiness checks (``A ∩ B``, ``A ∩ ¬B``,
``B ∩ ¬A``), where ``unknown`` counts as "not empty": no clause, always safe.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from functools import cached_property

import z3

from prover.encode.automata import (
    Element,
    compare,
    host_elements,
    literal_elements,
    matches,
    path_elements,
)
from prover.encode.globs import GlobCompiler
from prover.encode.logic import make_solver

CHECK_TIMEOUT_MS = 200

Key = tuple[str, str, str]


class Relation(Enum):
    EQUAL = "equal"
    SUBSET = "subset"
    SUPERSET = "superset"
    DISJOINT = "disjoint"
    OVERLAP = "overlap"


class Relations:
    """Cached relations between atom languages in one context.

    ``timeout_ms`` is called before every Z3 check (it may raise to stop the check) and
    returns the time left in milliseconds.
    """

    def __init__(self, globs: GlobCompiler, timeout_ms: Callable[[], int]) -> None:
        self.globs = globs
        self.ctx = globs.ctx
        self._timeout_ms = timeout_ms
        # Keyed by (kind, pattern) pairs: the field does not matter (binary and ancestor
        # share their patterns' relations).
        self._cache: dict[tuple[tuple[str, str], tuple[str, str]], Relation] = {}
        self._subject = z3.String("relation_subject", self.ctx)

    @cached_property
    def _solver(self) -> z3.Solver:
        """Made on first use: most relations are decided in Python."""
        return make_solver(self.ctx)

    def relation(self, left: Key, right: Key) -> Relation:
        """The relation of two atoms' languages (same field, any kinds)."""
        pair = ((left[1], left[2]), (right[1], right[2]))
        cached = self._cache.get(pair)
        if cached is None:
            cached = self._compute(left, right)
            self._cache[pair] = cached
            self._cache[(pair[1], pair[0])] = _flip(cached)
        return cached

    def _regex(self, key: Key) -> z3.ReRef:
        _, kind, pattern = key
        if kind == "eq":
            return self.globs.literal(pattern)
        return self.globs.host(pattern) if kind == "host" else self.globs.path(pattern)

    def _compute(self, left: Key, right: Key) -> Relation:
        if left[1:] == right[1:]:
            return Relation.EQUAL
        if left[1] == "eq" and right[1] == "eq":
            return Relation.DISJOINT
        if left[1] == "eq":
            return _literal_relation(matches(_elements(right), left[2]))
        if right[1] == "eq":
            return _flip(_literal_relation(matches(_elements(left), right[2])))
        comparison = compare(_elements(left), _elements(right))
        if comparison is None:
            return self._compute_with_z3(left, right)
        return _relation(comparison.both, comparison.only_left, comparison.only_right)

    def _compute_with_z3(self, left: Key, right: Key) -> Relation:
        """For products too large to explore in Python (never seen in practice)."""
        a, b = self._regex(left), self._regex(right)
        both = not self._empty(z3.Intersect(a, b))
        only_left = not self._empty(z3.Intersect(a, z3.Complement(b)))
        only_right = not self._empty(z3.Intersect(b, z3.Complement(a)))
        return _relation(both, only_left, only_right)

    def _empty(self, regex: z3.ReRef) -> bool:
        """True only when Z3 proves that no string is in ``regex``."""
        self._solver.set("timeout", max(1, min(CHECK_TIMEOUT_MS, self._timeout_ms())))
        self._solver.push()
        try:
            self._solver.add(z3.InRe(self._subject, regex))
            return self._solver.check() == z3.unsat
        finally:
            self._solver.pop()


def _elements(key: Key) -> tuple[Element, ...]:
    _, kind, pattern = key
    if kind == "eq":
        return literal_elements(pattern)
    return host_elements(pattern) if kind == "host" else path_elements(pattern)


def _relation(both: bool, only_left: bool, only_right: bool) -> Relation:
    """The relation of two non-empty languages from what their product can reach."""
    if not both:
        return Relation.DISJOINT
    if not only_left and not only_right:
        return Relation.EQUAL
    if not only_left:
        return Relation.SUBSET
    if not only_right:
        return Relation.SUPERSET
    return Relation.OVERLAP


def _literal_relation(inside: bool) -> Relation:
    """A literal's language (one string) against a glob's."""
    return Relation.SUBSET if inside else Relation.DISJOINT


def _flip(relation: Relation) -> Relation:
    if relation is Relation.SUBSET:
        return Relation.SUPERSET
    if relation is Relation.SUPERSET:
        return Relation.SUBSET
    return relation

"""String atoms: the only way the solver's queries mention strings.

Z3's sequence theory is erratic on queries that mix several string variables, each in
several regular languages, under Boolean structure: the same small query took 0.4 s to
8 s depending on the random seed (z3 5.4), and ``s ∈ A ∧ ¬(s ∈ B)`` can time out where
``s ∈ A ∩ complement(B)`` takes a millisecond. So the main query contains no string at
all. Every string condition is an *atom*: a Boolean variable standing for
``field ∈ L(pattern)`` (a glob) or ``field = literal``. Which combinations of atom values
a real string can realise is checked lazily, one field at a time, by
:mod:`prover.encode.oracle`, and impossible combinations are blocked by learned clauses.
Cheap facts about pairs of atoms (``L(a) ⊆ L(b)``, disjoint languages, at most one
literal of a field) are added upfront.

Atom keys are ``(field, kind, pattern)`` with ``kind`` ``"host"`` or ``"path"`` for a
glob and ``"eq"`` for a literal; a glob pattern without ``*`` is stored as a literal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import z3

from prover.encode.automata import host_elements, matches, path_elements
from prover.encode.globs import GlobCompiler
from prover.encode.logic import mk_and, mk_not
from prover.encode.relations import Relation, Relations
from prover.encode.terms import AtomKey, Term

MAX_LEMMA_PAIRS = 64


def atom_key(field: str, kind: str, pattern: str) -> AtomKey:
    """The normalised key: a pattern without ``*`` is the literal itself."""
    if kind != "eq" and "*" not in pattern:
        return (field, "eq", pattern)
    return (field, kind, pattern)


class StringAtoms:
    """The Boolean atoms of one context, with their meaning as regular languages."""

    def __init__(self, globs: GlobCompiler, name: str = "") -> None:
        """``name`` keeps the atoms of registries sharing a context apart."""
        self.globs = globs
        self._prefix = f"atom_{name}_" if name else "atom_"
        self.ctx = globs.ctx
        self._atoms: dict[AtomKey, z3.BoolRef] = {}

    def atom(self, field: str, kind: str, pattern: str) -> Term:
        key = atom_key(field, kind, pattern)
        atom = self._atoms.get(key)
        if atom is None:
            atom = z3.Bool(f"{self._prefix}{len(self._atoms)}", self.ctx)
            self._atoms[key] = atom
        return Term(atom, frozenset((key,)))

    def variable(self, key: AtomKey) -> z3.BoolRef:
        return self._atoms[key]

    def regex(self, key: AtomKey) -> z3.ReRef:
        _, kind, pattern = key
        if kind == "eq":
            return self.globs.literal(pattern)
        if kind == "host":
            return self.globs.host(pattern)
        return self.globs.path(pattern)

    def holds_for(self, key: AtomKey, value: str) -> bool:
        """Whether the atom is true of the concrete string ``value``."""
        _, kind, pattern = key
        if kind == "eq":
            return value == pattern
        elements = host_elements(pattern) if kind == "host" else path_elements(pattern)
        return matches(elements, value)

    # -- upfront facts -----------------------------------------------------------------
    def lemmas(
        self,
        atoms: Iterable[AtomKey],
        relations: Relations,
        *,
        focus: Iterable[AtomKey] = (),
        max_pairs: int = MAX_LEMMA_PAIRS,
    ) -> list[z3.BoolRef]:
        """Facts relating the atoms of one field: at most one of its literals holds; for
        every pair with a ``focus`` atom, and up to ``max_pairs`` further pairs, the
        relation of their languages (see :mod:`prover.encode.relations`)."""
        by_field: dict[str, list[AtomKey]] = {}
        for key in sorted(atoms):
            by_field.setdefault(key[0], []).append(key)
        focused = set(focus)
        facts: list[z3.BoolRef] = []
        for keys in by_field.values():
            literals = [self._atoms[k] for k in keys if k[1] == "eq"]
            if len(literals) > 1:
                facts.append(z3.AtMost(*literals, 1))
            for left, right in _pairs(keys, focused, max_pairs):
                if left[1] == "eq" and right[1] == "eq":
                    continue
                relation = relations.relation(left, right)
                fact = self._fact(relation, left, right)
                if fact is not None:
                    facts.append(fact)
        return facts

    def _fact(self, relation: Relation, left: AtomKey, right: AtomKey) -> z3.BoolRef | None:
        a, b = self._atoms[left], self._atoms[right]
        if relation is Relation.EQUAL:
            return a == b
        if relation is Relation.SUBSET:
            return z3.Implies(a, b)
        if relation is Relation.SUPERSET:
            return z3.Implies(b, a)
        if relation is Relation.DISJOINT:
            return mk_not(mk_and([a, b], self.ctx))
        return None


def _pairs(
    keys: list[AtomKey], focused: set[AtomKey], max_pairs: int
) -> Iterator[tuple[AtomKey, AtomKey]]:
    """Every pair with a focused atom, then up to ``max_pairs`` other pairs."""
    for anchor in (k for k in keys if k in focused):
        for other in keys:
            if other != anchor and (other not in focused or other > anchor):
                yield anchor, other
    others = [k for k in keys if k not in focused]
    count = 0
    for i, left in enumerate(others):
        for right in others[i + 1 :]:
            if count >= max_pairs:
                return
            count += 1
            yield left, right

"""Boolean terms that remember which string atoms they use.

Every :class:`Term` carries the set of string atoms (see :mod:`prover.encode.strings`)
occurring in it, so that a query only pays for the atoms it actually mentions, and its
constant value when that is known without asking Z3 (``and``/``or``/``not`` fold
constants in Python: a false grant drops out of a disjunction before Z3 sees it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import z3

from prover.encode.logic import literal_value, mk_and, mk_not, mk_or

AtomKey = tuple[str, str, str]
"""(field name, kind, pattern): see :mod:`prover.encode.strings`."""

_EMPTY: frozenset[AtomKey] = frozenset()


@dataclass(frozen=True, slots=True)
class Term:
    """A Boolean term, its atoms, and (when known without asking Z3) its constant value."""

    expr: z3.BoolRef
    atoms: frozenset[AtomKey] = _EMPTY
    value: bool | None = None


def constant(value: bool, ctx: z3.Context) -> Term:
    return Term(z3.BoolVal(value, ctx), _EMPTY, value)


def term_and(terms: Iterable[Term], ctx: z3.Context) -> Term:
    kept: list[Term] = []
    for term in terms:
        if term.value is False:
            return constant(False, ctx)
        if term.value is None:
            kept.append(term)
    if not kept:
        return constant(True, ctx)
    if len(kept) == 1:
        return kept[0]
    return Term(mk_and([t.expr for t in kept], ctx), _union(kept))


def term_or(terms: Iterable[Term], ctx: z3.Context) -> Term:
    kept: list[Term] = []
    for term in terms:
        if term.value is True:
            return constant(True, ctx)
        if term.value is None:
            kept.append(term)
    if not kept:
        return constant(False, ctx)
    if len(kept) == 1:
        return kept[0]
    return Term(mk_or([t.expr for t in kept], ctx), _union(kept))


def term_not(term: Term) -> Term:
    if term.value is not None:
        return constant(not term.value, term.expr.ctx)
    return Term(mk_not(term.expr), term.atoms)


def lift(expr: z3.BoolRef) -> Term:
    """A term without atoms for ``expr``, constant-folded if it is ``true``/``false``."""
    value = literal_value(expr)
    return Term(expr) if value is None else Term(expr, _EMPTY, value)


def _union(items: list[Term]) -> frozenset[AtomKey]:
    non_empty = [t.atoms for t in items if t.atoms]
    if not non_empty:
        return _EMPTY
    if len(non_empty) == 1:
        return non_empty[0]
    return frozenset().union(*non_empty)

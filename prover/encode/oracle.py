"""Which combinations of string-atom values a real string can realise, one field at a
time (the theory side of the lazy string search, see :mod:`prover.encode.strings`).

For a field and a truth value for each of its atoms, the question is whether some
string of the field's domain (spec §9.1) lies in the intersection of the atoms' languages
(or their complements). Z3 answers that in about a millisecond as *one* membership of
an intersection regex. A length bound makes the same question much slower, so the
lengths of the domain are checked on the answer and only added when the answer is too
long. When no string exists, the combination is shrunk (deletion-based: drop each atom
whose removal keeps it impossible) so that the learned clause blocks many models at
once.

``canonical=True`` also requires a canonical witness value (see :mod:`prover.encode.pins`):
then "impossible" only means "no readable witness", which callers must keep apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import z3

from prover.concrete.canonical import (
    is_action_domain_binary,
    is_action_domain_path,
    is_canonical_binary,
    is_canonical_host,
    is_canonical_rest_path,
    is_http_token,
    is_upper_http_token,
)
from prover.encode.action import (
    DOMAIN_LENGTHS,
    SymbolicAction,
    WitnessDecodeError,
    domain_regexes,
    exact_string,
    string_subject,
    string_value,
)
from prover.encode.logic import make_solver
from prover.encode.pins import PIN_LENGTHS, pin_regexes
from prover.encode.preferences import fill_wildcards
from prover.encode.strings import StringAtoms
from prover.encode.terms import AtomKey

CheckFn = Callable[[z3.Solver, list[z3.BoolRef], bool], z3.CheckSatResult]
"""``check(solver, assumptions, short)``: a budgeted check that raises instead of
returning ``unknown`` (never read as "impossible": that would be unsound)."""

Literal = tuple[AtomKey, bool]


#: How many preferred values, and how many pattern values, are tried before Z3 is asked.
PREFERRED_VALUES = 16


@dataclass(frozen=True, slots=True)
class Conflict:
    """These atom values cannot all hold for one string of the field."""

    literals: tuple[Literal, ...]


class StringOracle:
    """Decides, per field, whether atom values are realisable, and finds a value."""

    def __init__(self, action: SymbolicAction, atoms: StringAtoms, check: CheckFn) -> None:
        self.action = action
        self.atoms = atoms
        self.ctx = action.ctx
        self._check = check
        self._pin_regexes: dict[str, z3.ReRef] | None = None
        self._short = False
        # Answers are facts about strings, the same in every scope of the check: each
        # question goes to Z3 once. (A check that gave up raises and is not kept.)
        self._held: dict[tuple[str, tuple[Literal, ...], bool, str], bool] = {}
        self._realised: dict[tuple[str, tuple[Literal, ...], bool], z3.ModelRef | None] = {}

    # The solver and the domain languages are built on first use: a check that finds no
    # exceeding model (most within answers) never asks the oracle anything.
    @cached_property
    def _solver(self) -> z3.Solver:
        return make_solver(self.ctx)

    @cached_property
    def _domain(self) -> dict[str, z3.ReRef]:
        return domain_regexes(self.action)

    @property
    def _pins(self) -> dict[str, z3.ReRef]:
        """The canonical languages, built on first use: only a witness search (after an
        exceeding answer) asks for canonical strings, and building them costs a few
        milliseconds of term construction per solve."""
        if self._pin_regexes is None:
            self._pin_regexes = pin_regexes(self.action)
        return self._pin_regexes

    def _limit(self, field: str, canonical: bool) -> int | None:
        limits = [DOMAIN_LENGTHS.get(field)]
        if canonical:
            limits.append(PIN_LENGTHS.get(field))
        present = [limit for limit in limits if limit is not None]
        return min(present) if present else None

    def _regexes(self, field: str, literals: list[Literal], canonical: bool) -> list[z3.ReRef]:
        regexes = [self._domain[field]] if field in self._domain else []
        if canonical:
            regexes.append(self._pins[field])
        for key, holds in literals:
            regex = self.atoms.regex(key)
            regexes.append(regex if holds else z3.Complement(regex))
        return regexes

    def _holds(self, field: str, literals: list[Literal], canonical: bool, value: str) -> bool:
        """Whether ``value`` satisfies everything (decided by Z3 on a constant).

        The atoms' own matcher (:meth:`StringAtoms.holds_for`, the glob semantics their
        regexes encode) rejects a value first: most preferred values fail there, and a
        rejected value is only a preference not taken, never a decision."""
        for key, holds in literals:
            if self.atoms.holds_for(key, value) != holds:
                return False
        memo = (field, tuple(literals), canonical, value)
        known = self._held.get(memo)
        if known is None:
            known = self._held[memo] = self._holds_in_z3(field, literals, canonical, value)
        return known

    def _holds_in_z3(
        self, field: str, literals: list[Literal], canonical: bool, value: str
    ) -> bool:
        """Whether ``value`` lies in the field's domain (and canonical language): by the
        concrete checks the witness must pass anyway where the field has them, else by
        Z3 on a constant (the atoms' own languages are checked by the caller)."""
        term = string_subject(self.action, field)
        canonical_check = _CANONICAL_CHECKS.get(field) if canonical else None
        if canonical_check is not None and field == "method" and self.action.engine:
            canonical_check = is_upper_http_token
        if canonical_check is not None:
            # The canonical language of this field by the check the witness must pass
            # anyway (``witness_is_canonical``); Z3 takes a millisecond for it.
            if not canonical_check(value):
                return False
            canonical = False
        limit = self._limit(field, canonical)
        if limit is not None and len(value) > limit:
            return False
        constant = string_value(value, self.ctx)
        if constant is None:
            return False
        domain_check = _DOMAIN_CHECKS.get(field)
        if not canonical and domain_check is not None:
            # Every language left is decided in Python: the domain by its concrete
            # check, the atoms by their matcher (the caller's, the same glob reading as
            # their regexes). A value taken here is still only a candidate: it decides
            # nothing (no clause is learned from it) and every witness is replayed.
            return domain_check(value)
        regexes = self._regexes(field, literals, canonical)
        if not regexes:
            return True
        member = z3.InRe(constant, _intersect(regexes))
        result = z3.simplify(member)
        if z3.is_true(result) or z3.is_false(result):
            return z3.is_true(result)
        fixed = term == constant
        return self._run([z3.InRe(term, _intersect(regexes)), fixed]) == z3.sat

    def _run(self, constraints: list[z3.BoolRef]) -> z3.CheckSatResult:
        self._solver.push()
        try:
            self._solver.add(*constraints)
            return self._check(self._solver, [], self._short)
        finally:
            self._solver.pop()

    def _model_of(self, constraints: list[z3.BoolRef]) -> z3.ModelRef | None:
        """A model of ``constraints``, or ``None`` when Z3 proves there is none."""
        self._solver.push()
        try:
            self._solver.add(*constraints)
            if self._check(self._solver, [], self._short) != z3.sat:
                return None
            return self._solver.model()
        finally:
            self._solver.pop()

    def _realise(self, field: str, literals: list[Literal], canonical: bool) -> z3.ModelRef | None:
        """A model with a string for ``field`` in every language (and within the length
        bound), or ``None`` when no such string exists. Decided by ``sat``/``unsat``
        alone, never by whether the string can be printed."""
        memo = (field, tuple(literals), canonical)
        if memo not in self._realised:
            self._realised[memo] = self._realise_in_z3(field, literals, canonical)
        return self._realised[memo]

    def _realise_in_z3(
        self, field: str, literals: list[Literal], canonical: bool
    ) -> z3.ModelRef | None:
        term = string_subject(self.action, field)
        regexes = self._regexes(field, literals, canonical)
        membership = [z3.InRe(term, _intersect(regexes))] if regexes else []
        model = self._model_of(membership)
        limit = self._limit(field, canonical)
        if model is None or limit is None:
            return model
        length = model.eval(z3.Length(term), model_completion=True)
        if isinstance(length, z3.IntNumRef) and length.as_long() <= limit:
            return model
        # Only strings above the length bound came out: ask again with the bound.
        return self._model_of([*membership, z3.Length(term) <= limit])

    def solve(
        self,
        field: str,
        literals: list[Literal],
        *,
        canonical: bool,
        short: bool = False,
        prefer: Sequence[str] = (),
    ) -> str | Conflict | None:
        """Whether some string of ``field`` gives every atom its value in ``literals``:
        the (shrunk) :class:`Conflict` when none does; else the string, or ``None`` when
        it cannot be read back exactly (possible only with ``canonical=False``: canonical
        strings are printable ASCII). ``short`` limits each check's time.

        After ``prefer``, the patterns of the atoms that must hold (an exact value, a
        glob with its wildcards filled in), then a value unlike any pattern, are tried
        before Z3 is asked for a string: each is confirmed by Z3 on a constant, and a
        policy's own pattern reads better in a witness than a string the solver made
        up."""
        self._short = short
        tried: set[str] = set()
        # A bounded number of each (each is tested against every atom of the field: a
        # policy of 1,500 binary globs made it 1,500 values, seconds past the deadline).
        values = [
            *prefer[:PREFERRED_VALUES],
            *_pattern_values(literals)[:PREFERRED_VALUES],
            *_FRESH_VALUES.get(field, ()),
        ]
        for value in values:
            if value in tried:
                continue
            tried.add(value)
            if self._holds(field, literals, canonical, value):
                return value
        model = self._realise(field, literals, canonical)
        if model is None:
            return Conflict(tuple(self._shrink(field, literals, canonical)))
        try:
            return exact_string(model, string_subject(self.action, field))
        except WitnessDecodeError:
            return None

    def _possible(self, field: str, literals: list[Literal], canonical: bool) -> bool:
        return self._realise(field, literals, canonical) is not None

    def _shrink(self, field: str, literals: list[Literal], canonical: bool) -> list[Literal]:
        kept = list(literals)
        for literal in list(literals):
            trial = [other for other in kept if other != literal]
            if not self._possible(field, trial, canonical):
                kept = trial
        return kept


def _canonical_binary(value: str) -> bool:
    """The canonical binary language of :func:`prover.encode.pins.pin_regexes`: a
    canonical path of printable ASCII without ``\\``, in the action domain."""
    return (
        is_canonical_binary(value)
        and all(" " <= c <= "~" and c != "\\" for c in value)
        and is_action_domain_binary(value)
    )


#: Fields whose canonical language (:func:`prover.encode.pins.pin_regexes`) a concrete
#: check decides for a value: the same language, except that the check also bounds a
#: host's labels to 63 characters, as the validation of every witness does.
_CANONICAL_CHECKS: dict[str, Callable[[str], bool]] = {
    "host": is_canonical_host,
    "method": is_http_token,
    "path": lambda value: is_canonical_rest_path(value) and is_action_domain_path(value),
    "binary": _canonical_binary,
    "ancestor": _canonical_binary,
}


#: The action domain of each field (:func:`prover.encode.action.domain_regexes`) as a
#: concrete check: the same language, lengths included (a host is any string).
_DOMAIN_CHECKS: dict[str, Callable[[str], bool]] = {
    "host": lambda value: True,
    "method": bool,
    "path": is_action_domain_path,
    "binary": is_action_domain_binary,
    "ancestor": is_action_domain_binary,
}

#: Values unlike any policy pattern, for atom values that all say "not this pattern".
_FRESH_VALUES: dict[str, tuple[str, ...]] = {
    "host": ("a.invalid",),
    "method": ("A",),
    "path": ("/a",),
    "binary": ("/a",),
    "ancestor": ("/a",),
}


def _pattern_values(literals: Sequence[Literal]) -> list[str]:
    """Values that satisfy the atoms that must hold, if anything does: an exact atom's
    own value, a glob's wildcards filled in."""
    values: list[str] = []
    for (_, kind, pattern), holds in literals:
        if not holds:
            continue
        if kind == "eq":
            values.append(pattern)
        else:
            values.append(fill_wildcards(pattern))
            values.append(fill_wildcards(pattern, "a", "a.a" if kind == "host" else "a/a"))
    return values


def _intersect(regexes: list[z3.ReRef]) -> z3.ReRef:
    return regexes[0] if len(regexes) == 1 else z3.Intersect(*regexes)

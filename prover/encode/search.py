"""The lazy string search: a model of the main (string-free) query whose string atoms a
real string can realise, field by field.

Round: solve the main query; read each field's atom values from the model; ask the
oracle (:mod:`prover.encode.oracle`) for a string with those values. If a field has
none, add the clause "not all of these values" (shrunk) and solve again; else the model
and the strings together are a real action. Every round blocks at least one impossible
combination, so the search ends; the budget bounds it in time.

Soundness: in *deciding* mode the oracle is exact, so a learned clause only removes
combinations no string realises and ``unsat`` means no action exists. In *canonical*
mode (witness search) a clause also removes combinations without a canonical string;
those clauses live in a solver scope of their own and never decide anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import z3

from prover.encode.logic import literal_value, mk_not, mk_or
from prover.encode.oracle import Conflict, StringOracle
from prover.encode.strings import StringAtoms
from prover.encode.terms import AtomKey

CheckFn = Callable[[z3.Solver, list[z3.BoolRef], bool], z3.CheckSatResult]
"""``check(solver, assumptions, short)``: a budgeted check (``short``: a small time
limit) that raises ``SolverGaveUp`` or ``BudgetExhausted`` instead of returning
``unknown``."""


@dataclass(frozen=True, slots=True)
class Found:
    """A model of the main query and a realising string for each field asked for (a
    field whose string cannot be read back exactly is missing; see the oracle)."""

    model: z3.ModelRef
    strings: dict[str, str]


class LazySearch:
    """Runs rounds of main query + oracle on one main solver."""

    def __init__(
        self,
        solver: z3.Solver,
        atoms: StringAtoms,
        oracle: StringOracle,
        check: CheckFn,
    ) -> None:
        self.solver = solver
        self.atoms = atoms
        self.oracle = oracle
        self._check = check
        self.learned: list[tuple[z3.BoolRef, frozenset[AtomKey]]] = []
        #: After a run that found nothing: the assumptions of its last, unsatisfiable
        #: check that Z3 named as conflicting (its unsat core).
        self.last_core: list[z3.BoolRef] = []

    def relevant_learned(self, atoms: frozenset[AtomKey]) -> list[z3.BoolRef]:
        """Clauses learned earlier (deciding mode) that only mention ``atoms``."""
        return [clause for clause, keys in self.learned if keys <= atoms]

    def run(
        self,
        atom_keys: Iterable[AtomKey],
        *,
        fields: Sequence[str],
        assumptions: Sequence[z3.BoolRef] = (),
        canonical: bool = False,
        short: bool = False,
        prefer: Mapping[str, Sequence[str]] | None = None,
    ) -> Found | None:
        """A realisable model, or ``None`` when the main query (under ``assumptions``
        and the clauses learned so far) has none. ``fields`` are the fields to find
        strings for; a field without atoms is realisable by its domain alone."""
        by_field: dict[str, list[AtomKey]] = {}
        for key in sorted(atom_keys):
            by_field.setdefault(key[0], []).append(key)
        wanted = list(dict.fromkeys([*fields]))
        self.last_core = []
        while True:
            if self._check(self.solver, list(assumptions), short) == z3.unsat:
                self.last_core = list(self.solver.unsat_core()) if assumptions else []
                return None
            model = self.solver.model()
            strings: dict[str, str] = {}
            conflict: Conflict | None = None
            for field in wanted:
                literals = [
                    (key, literal_value(model.eval(self.atoms.variable(key), True)) is True)
                    for key in by_field.get(field, [])
                ]
                hints = list((prefer or {}).get(field, ()))
                if field == "ancestor" and "binary" in strings:
                    hints.insert(0, strings["binary"])
                answer = self.oracle.solve(
                    field, literals, canonical=canonical, short=short, prefer=hints
                )
                if isinstance(answer, Conflict):
                    conflict = answer
                    break
                if answer is not None:
                    strings[field] = answer
            if conflict is None:
                return Found(model, strings)
            self._block(conflict, learn=not canonical)

    def _block(self, conflict: Conflict, *, learn: bool) -> None:
        ctx = self.solver.ctx
        clause = mk_or(
            [
                *[
                    mk_not(self.atoms.variable(key)) if holds else self.atoms.variable(key)
                    for key, holds in conflict.literals
                ],
                z3.BoolVal(False, ctx),
            ],
            ctx,
        )
        self.solver.add(clause)
        if learn:
            self.learned.append((clause, frozenset(key for key, _ in conflict.literals)))

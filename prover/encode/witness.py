"""A readable, canonical witness for a slice known to exceed (spec §9.8 step 3).

Runs the lazy string search in *canonical* mode (every string must be canonical, see
:mod:`prover.encode.pins`) inside a solver scope of its own, steered by preferences
taken as assumptions: string fields in the same atom cells as values built from the
candidate's own patterns (wildcards filled with ``a``, as the concrete probes do), the
ancestor binary like the binary, no trusted gateway, an IPv4 address, ``8.8.8.8``, the
granting endpoint's layer. All preferences at once first, except the fallbacks that only
stand in for an earlier one (a short attempt); otherwise none, with the whole remaining
budget, then greedily one at a time (short attempts).
``None`` means that no canonical witness exists in this slice; the caller never reads
it as containment.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import z3

from prover.encode.action import SymbolicAction
from prover.encode.logic import SolverGaveUp, literal_value, mk_and, mk_not, mk_or
from prover.encode.preferences import scalar_preferences, string_exemplars
from prover.encode.search import Found, LazySearch
from prover.encode.strings import StringAtoms
from prover.encode.terms import AtomKey
from prover.policy.model import Endpoint, Rule

EXEMPLAR_CELLS = 3


def string_fields(action: SymbolicAction) -> list[str]:
    fields = ["host", "method", "path"]
    return [*fields, "binary", "ancestor"] if action.identity else fields


class WitnessSearch:
    def __init__(self, action: SymbolicAction, atoms: StringAtoms, search: LazySearch) -> None:
        self.action = action
        self.atoms = atoms
        self.search = search
        self.ctx = action.ctx

    def find(
        self, atom_keys: frozenset[AtomKey], granting: list[tuple[Rule, Endpoint]]
    ) -> Found | None:
        exemplars = string_exemplars(granting)
        wanted, together = self._preferences(atom_keys, exemplars, granting)
        solver = self.search.solver
        solver.push()
        try:
            found = self._attempt(atom_keys, together, exemplars)
            if found is not None:
                return found
            core = self.search.last_core
            if len(core) == 1:
                # One preference alone conflicts: the greedy search below would refuse it
                # (it fails with any preferences kept, the clauses of this scope only
                # grow) and keep every other one if they hold together. Ask that at once.
                (culprit,) = core
                rest = [p for p in together if not p.eq(culprit)]
                if len(rest) < len(together):
                    found = self._attempt(atom_keys, rest, exemplars)
                    if found is not None:
                        return found
            # The deciding attempt: no preference, the whole remaining budget.
            found = self._attempt(atom_keys, [], exemplars, short=False)
            if found is None:
                return None
            kept: list[z3.BoolRef] = []
            for preference in wanted:
                if _satisfies(found, preference):
                    # This witness already has it: keep the preference without a search.
                    kept.append(preference)
                    continue
                better = self._attempt(atom_keys, [*kept, preference], exemplars)
                if better is not None:
                    kept.append(preference)
                    found = better
            return found
        finally:
            solver.pop()

    def _attempt(
        self,
        atom_keys: frozenset[AtomKey],
        assumptions: list[z3.BoolRef],
        exemplars: dict[str, list[str]],
        *,
        short: bool = True,
    ) -> Found | None:
        """A canonical realisable model under ``assumptions``. A short attempt that Z3
        gives up on counts as failed; a long one raises."""
        fields = string_fields(self.action)
        try:
            found = self.search.run(
                atom_keys,
                fields=fields,
                assumptions=assumptions,
                canonical=True,
                short=short,
                prefer=exemplars,
            )
        except SolverGaveUp:
            if not short:
                raise
            return None
        if found is not None and not all(field in found.strings for field in fields):
            return None  # a string that cannot be read back: not a usable witness
        return found

    # -- preferences -------------------------------------------------------------------
    def _cell(self, keys: Sequence[AtomKey], value: str) -> z3.BoolRef | None:
        """The atoms of ``keys`` take the values they have for the string ``value``."""
        parts: list[z3.BoolRef] = []
        for key in keys:
            holds = self.atoms.holds_for(key, value)
            variable = self.atoms.variable(key)
            parts.append(variable if holds else mk_not(variable))
        return mk_and(parts, self.ctx) if parts else None

    def _preferences(
        self,
        atom_keys: Iterable[AtomKey],
        exemplars: dict[str, list[str]],
        granting: list[tuple[Rule, Endpoint]],
    ) -> tuple[list[z3.BoolRef], list[z3.BoolRef]]:
        """The preferences, most important first, for the greedy search; and those
        worth asking all at once (without the fallbacks: a fallback only stands in for
        an earlier preference, so asking both at once almost always fails)."""
        by_field: dict[str, list[AtomKey]] = {}
        for key in sorted(atom_keys):
            by_field.setdefault(key[0], []).append(key)

        def cells(field: str) -> z3.BoolRef | None:
            # Only the first values are asked for: building a cell for every value
            # (1,500 binary globs: 1,500 values against as many atoms) took seconds.
            keys = by_field.get(field, [])
            options = [self._cell(keys, v) for v in exemplars[field][:EXEMPLAR_CELLS]]
            present = [c for c in options if c is not None]
            return mk_or(present, self.ctx) if present else None

        out: list[z3.BoolRef | None] = []
        if self.action.identity:
            out.append(cells("binary"))
            same = [
                self.atoms.variable(key) == self.atoms.variable(("ancestor", *key[1:]))
                for key in by_field.get("binary", [])
                if ("ancestor", *key[1:]) in set(by_field.get("ancestor", []))
            ]
            out.append(mk_and(same, self.ctx) if same else None)
        scalars = scalar_preferences(self.action, granting)
        fallbacks = [term for term, fallback in scalars if fallback]
        out.append(cells("host"))
        out.extend(term for term, _ in scalars)
        out.append(cells("method"))
        out.append(cells("path"))
        wanted = [p for p in out if p is not None]
        return wanted, [p for p in wanted if not any(p is f for f in fallbacks)]


def _satisfies(found: Found, preference: z3.BoolRef) -> bool:
    """Whether the witness's model makes ``preference`` true (every atom it reads has a
    value in the model, and the strings realise those values)."""
    return literal_value(found.model.eval(preference, model_completion=True)) is True

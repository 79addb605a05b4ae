"""Decoded REST query parameters as a finite set of Boolean classes (spec §9.5).

Matchers are exact strings or ``*`` (any value without ``.``). For every key mentioned
by either policy there is one Boolean per literal value mentioned for that key, plus two
"other value" classes: values that no policy names, split into dot-free (matched by
``*``) and dotted (not matched). A class is true when the request carries at least one
value of that class for the key; all-false means the key is absent (a bare ``?k`` is one
empty value, which is a class like any other). Multiplicity and order of values change
neither allow ("present and every value matches") nor deny ("present and some value
matches"), so the classes are an exact abstraction.

Witnesses decode each true class to a value: a literal to itself, the dot-free other
class to ``""`` and the dotted one to ``"."``, each extended with ``a`` until it differs
from every literal of the key.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import z3

from prover.encode.logic import all_of, any_of, negate
from prover.policy.model import Policy, QueryMatcher

QueryValues = tuple[tuple[str, tuple[str, ...]], ...]


def wildcard_matches(value: str) -> bool:
    """Whether the whole-value ``*`` matcher accepts ``value``."""
    return "." not in value


def _other_witness(seed: str, literals: Iterable[str]) -> str:
    taken = set(literals)
    value = seed
    while value in taken:
        value += "a"
    return value


@dataclass(frozen=True)
class QueryKey:
    """The classes of one key."""

    key: str
    literals: dict[str, z3.BoolRef]
    other_plain: z3.BoolRef
    other_dotted: z3.BoolRef
    plain_witness: str
    dotted_witness: str

    def classes(self) -> list[tuple[z3.BoolRef, str]]:
        """Every class with the value it decodes to, literals first (sorted)."""
        pairs = [(flag, value) for value, flag in self.literals.items()]
        pairs.append((self.other_plain, self.plain_witness))
        pairs.append((self.other_dotted, self.dotted_witness))
        return pairs


def mentioned_literals(policies: Iterable[Policy]) -> dict[str, set[str]]:
    """Key -> exact values named by any allow or deny rule of ``policies``."""
    keys: dict[str, set[str]] = {}
    for policy in policies:
        for rule in policy.rules:
            for endpoint in rule.endpoints:
                for http in (*endpoint.allow_rules, *endpoint.deny_rules):
                    for matcher in http.query:
                        values = keys.setdefault(matcher.key, set())
                        if matcher.value is not None:
                            values.add(matcher.value)
    return keys


class QuerySpace:
    """The query classes of one symbolic action, shared by both policies."""

    def __init__(self, policies: Iterable[Policy], name: str, ctx: z3.Context) -> None:
        self.ctx = ctx
        self.keys: dict[str, QueryKey] = {}
        for key_index, (key, values) in enumerate(sorted(mentioned_literals(policies).items())):
            ordered = sorted(values)
            self.keys[key] = QueryKey(
                key=key,
                literals={
                    value: z3.Bool(f"{name}_q{key_index}_v{value_index}", ctx)
                    for value_index, value in enumerate(ordered)
                },
                other_plain=z3.Bool(f"{name}_q{key_index}_plain", ctx),
                other_dotted=z3.Bool(f"{name}_q{key_index}_dotted", ctx),
                plain_witness=_other_witness("", ordered),
                dotted_witness=_other_witness(".", ordered),
            )

    def _classes_where(self, key: QueryKey, matching: bool) -> list[z3.BoolRef]:
        """Classes whose values the ``*`` matcher accepts (or rejects)."""
        return [flag for flag, value in key.classes() if wildcard_matches(value) == matching]

    def allow_match(self, matchers: tuple[QueryMatcher, ...]) -> z3.BoolRef:
        """Every configured key present and all of its values matching."""
        terms: list[z3.BoolRef] = []
        for matcher in matchers:
            key = self.keys[matcher.key]
            if matcher.value is None:
                accepted = any_of(self._classes_where(key, True), self.ctx)
                rejected = any_of(self._classes_where(key, False), self.ctx)
                terms.append(all_of([accepted, negate(rejected)], self.ctx))
            else:
                wanted = key.literals[matcher.value]
                others = [flag for flag, value in key.classes() if value != matcher.value]
                terms.append(all_of([wanted, negate(any_of(others, self.ctx))], self.ctx))
        return all_of(terms, self.ctx)

    def deny_match(self, matchers: tuple[QueryMatcher, ...]) -> z3.BoolRef:
        """Every configured key present with at least one matching value."""
        terms: list[z3.BoolRef] = []
        for matcher in matchers:
            key = self.keys[matcher.key]
            if matcher.value is None:
                terms.append(any_of(self._classes_where(key, True), self.ctx))
            else:
                terms.append(key.literals[matcher.value])
        return all_of(terms, self.ctx)

    def decode(self, model: z3.ModelRef) -> QueryValues:
        """The request's decoded query: each present key with one value per true class."""
        decoded: list[tuple[str, tuple[str, ...]]] = []
        for key in self.keys.values():
            values = tuple(
                value
                for flag, value in key.classes()
                if z3.is_true(model.eval(flag, model_completion=True))
            )
            if values:
                decoded.append((key.key, values))
        return tuple(decoded)

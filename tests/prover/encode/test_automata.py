"""The Python automata decide glob relations exactly as Z3 does on the same regexes.

The relations become clauses of every query (``L(a) ⊆ L(b)`` gives ``a → b``), so a
wrong answer here would be unsound: each is compared with Z3 emptiness checks.
"""

from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.concrete.glob import binary_matches, host_matches
from prover.encode.automata import compare, host_elements, matches, path_elements
from prover.encode.globs import GlobCompiler
from prover.encode.relations import Relation, Relations

CTX = z3.Context()
GLOBS = GlobCompiler(CTX)
RELATIONS = Relations(GLOBS, lambda: 10_000)


def z3_nonempty(regex: z3.ReRef) -> bool:
    solver = z3.Solver(ctx=CTX)
    solver.set("timeout", 10_000)
    solver.add(z3.InRe(z3.String("s", CTX), regex))
    result = solver.check()
    assert result != z3.unknown
    return result == z3.sat


def z3_comparison(a: z3.ReRef, b: z3.ReRef) -> tuple[bool, bool, bool]:
    return (
        z3_nonempty(z3.Intersect(a, b)),
        z3_nonempty(z3.Intersect(a, z3.Complement(b))),
        z3_nonempty(z3.Intersect(b, z3.Complement(a))),
    )


patterns = st.text(st.sampled_from("ab.-/*"), max_size=7)


@settings(max_examples=150, deadline=None)
@given(left=patterns, right=patterns)
def test_host_comparison_agrees_with_z3(left: str, right: str) -> None:
    ours = compare(host_elements(left), host_elements(right))
    assert ours is not None
    assert (ours.both, ours.only_left, ours.only_right) == z3_comparison(
        GLOBS.host(left), GLOBS.host(right)
    )


@settings(max_examples=150, deadline=None)
@given(left=patterns, right=patterns)
def test_path_comparison_agrees_with_z3(left: str, right: str) -> None:
    ours = compare(path_elements(left), path_elements(right))
    assert ours is not None
    assert (ours.both, ours.only_left, ours.only_right) == z3_comparison(
        GLOBS.path(left), GLOBS.path(right)
    )


@settings(max_examples=150, deadline=None)
@given(pattern=patterns, subject=st.text(st.sampled_from("ab.-/é"), max_size=7))
def test_matching_agrees_with_the_concrete_matchers(pattern: str, subject: str) -> None:
    assert matches(host_elements(pattern), subject) is host_matches(pattern, subject)
    assert matches(path_elements(pattern), subject) is binary_matches(pattern, subject)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (
            ("host", "host", "*.svc1.example.com"),
            ("host", "host", "**.svc1.example.com"),
            Relation.SUBSET,
        ),
        (
            ("host", "host", "*.svc1.example.com"),
            ("host", "host", "*.svc2.example.com"),
            Relation.DISJOINT,
        ),
        (
            ("host", "host", "api*.example.com"),
            ("host", "host", "*i.example.com"),
            Relation.OVERLAP,
        ),
        (("host", "eq", "api.example.com"), ("host", "host", "*.example.com"), Relation.SUBSET),
        (("host", "host", "*.example.com"), ("host", "eq", "a.b.example.com"), Relation.DISJOINT),
        (("path", "path", "/a/**/b"), ("path", "path", "/a/**"), Relation.SUBSET),
        (("path", "path", "/a/*"), ("path", "path", "/a/x**"), Relation.SUPERSET),
        (("path", "path", "/a/**/**/b"), ("path", "path", "/a/**/b"), Relation.EQUAL),
        (("method", "eq", "GET"), ("method", "eq", "HEAD"), Relation.DISJOINT),
    ],
)
def test_relations_of_typical_patterns(
    left: tuple[str, str, str], right: tuple[str, str, str], expected: Relation
) -> None:
    assert RELATIONS.relation(left, right) is expected

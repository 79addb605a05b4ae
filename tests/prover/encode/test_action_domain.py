"""The symbolic action's domain, the canonical pins, decoding and query classes."""

from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.concrete.canonical import (
    is_action_domain_path,
    is_canonical_binary,
    is_canonical_host,
    is_canonical_rest_path,
    is_http_token,
)
from prover.encode.action import (
    WitnessDecodeError,
    action_domain,
    domain_regexes,
    exact_string,
    new_action,
    string_value,
)
from prover.encode.oracle import Conflict, StringOracle
from prover.encode.pins import pin_regexes
from prover.encode.query import QuerySpace
from prover.encode.strings import StringAtoms
from prover.policy.model import QueryMatcher
from tests.prover.encode.helpers import http, rest, single

CTX = z3.Context()
ACTION = new_action(CTX, [], identity=True)
DOMAIN = domain_regexes(ACTION)
PINS = pin_regexes(ACTION)


def member(regex: z3.ReRef, text: str) -> bool:
    result = z3.simplify(z3.InRe(z3.StringVal(text, CTX), regex))
    assert z3.is_true(result) or z3.is_false(result)
    return z3.is_true(result)


def test_path_domain_regex_is_the_references_constraints() -> None:
    # The reference's constraints (starts with "/", contains none of ..., does not end
    # in "/." or "/..") as one regex; the two languages must be equal.
    anything = z3.Full(z3.ReSort(z3.StringSort(CTX)))

    def lit(text: str) -> z3.ReRef:
        return z3.Re(z3.StringVal(text, CTX))

    reference = z3.Intersect(
        z3.Concat(lit("/"), anything),
        *[z3.Complement(z3.Concat(anything, lit(f), anything)) for f in ("//", "/./", "/../")],
        *[z3.Complement(z3.Concat(anything, lit(c), anything)) for c in ";?#"],
        *[z3.Complement(z3.Concat(anything, lit(f))) for f in ("/.", "/..")],
    )
    ours = DOMAIN["path"]
    difference = z3.Union(
        z3.Intersect(ours, z3.Complement(reference)),
        z3.Intersect(reference, z3.Complement(ours)),
    )
    solver = z3.Solver(ctx=CTX)
    solver.set("timeout", 20_000)
    solver.add(z3.InRe(z3.String("p", CTX), difference))
    assert solver.check() == z3.unsat


PATH_PARTS = st.sampled_from([*"/.a;?#-é ", "%2F", "%41", "%20", "%C3", "%e9", "%"])


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(PATH_PARTS, max_size=8))
def test_path_regexes_agree_with_the_concrete_forms(parts: list[str]) -> None:
    text = "".join(parts)
    in_domain = member(DOMAIN["path"], text)
    assert in_domain is is_action_domain_path(text)
    assert (in_domain and member(PINS["path"], text)) is is_canonical_rest_path(text)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from("ab-_.A9é"), max_size=10))
def test_host_pin_is_the_canonical_dns_form(text: str) -> None:
    assert member(PINS["host"], text) is is_canonical_host(text)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from("GETa-!*/ é\\"), max_size=6))
def test_method_pin_is_an_http_token(text: str) -> None:
    assert member(PINS["method"], text) is is_http_token(text)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(["/", "a", ".", "..", " ", "\x01", "é"]), max_size=8))
def test_binary_pin_only_admits_canonical_binaries(parts: list[str]) -> None:
    text = "".join(parts)
    if member(PINS["binary"], text):
        assert is_canonical_binary(text)


def test_every_domain_constraint_lives_in_the_actions_context() -> None:
    assert all(c.ctx is CTX for c in action_domain(ACTION))


def test_values_with_escapes_are_never_decoded() -> None:
    solver = z3.Solver(ctx=CTX)
    text = z3.String("t", CTX)
    solver.add(text == z3.Concat(z3.StringVal("a", CTX), z3.Unit(z3.CharVal(0, CTX))))
    assert solver.check() == z3.sat
    with pytest.raises(WitnessDecodeError):
        exact_string(solver.model(), text)
    assert string_value("a\\u{41}", CTX) is None
    assert string_value("plain", CTX) is not None


def test_query_classes_avoid_colliding_witness_values() -> None:
    policy = single(rest("a.com", allow=[http("GET", "", {"q": ""}), http("GET", "", {"q": "."})]))
    space = QuerySpace([policy], "t", CTX)
    key = space.keys["q"]
    assert (key.plain_witness, key.dotted_witness) == ("a", ".a")
    assert set(key.literals) == {"", "."}


def test_query_allow_and_deny_follow_all_versus_any() -> None:
    policy = single(rest("a.com", allow=[http("GET", "", {"q": "a.b"})]))
    space = QuerySpace([policy], "t", CTX)
    key = space.keys["q"]
    star = (QueryMatcher("q", None),)
    solver = z3.Solver(ctx=CTX)
    # A dot-free other value and a dotted literal at once: deny "*" fires, allow fails.
    solver.add(key.other_plain, key.literals["a.b"], z3.Not(key.other_dotted))
    solver.add(space.deny_match(star), z3.Not(space.allow_match(star)))
    assert solver.check() == z3.sat
    decoded = dict(space.decode(solver.model()))
    assert decoded == {"q": ("a.b", "")}


def test_a_realisable_cell_is_never_a_conflict_even_if_unprintable() -> None:
    # The only host in this cell is "\0", which cannot be read back exactly: deciding
    # mode must still call it realisable (a conflict would be an unsound clause).
    action = new_action(z3.Context(), [], identity=False)
    atoms = StringAtoms(action.globs)
    atoms.atom("host", "eq", "\0")

    def check(solver: z3.Solver, assumptions: list[z3.BoolRef], short: bool) -> object:
        return solver.check(*assumptions)

    oracle = StringOracle(action, atoms, check)  # type: ignore[arg-type]
    answer = oracle.solve("host", [(("host", "eq", "\0"), True)], canonical=False)
    assert answer is None
    conflict = oracle.solve(
        "host", [(("host", "eq", "\0"), True), (("host", "host", "*"), False)], canonical=False
    )
    assert isinstance(conflict, Conflict)


ORACLE_PARTS = st.sampled_from(
    ["/", "a", ".", "..", " ", "\x01", "é", "\\", ";", "?", "#", "%2F", "%41", "%C3", "~", "G"]
)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(ORACLE_PARTS, max_size=8))
def test_the_oracles_concrete_checks_are_the_regex_languages(parts: list[str]) -> None:
    # The oracle decides preferred values by these checks instead of asking Z3: they
    # must be exactly the domain (and, canonical, domain and pin) languages.
    from prover.encode.oracle import _CANONICAL_CHECKS, _DOMAIN_CHECKS

    text = "".join(parts)
    for field in ("method", "path", "binary", "ancestor"):
        in_domain = member(DOMAIN[field], text)
        assert _DOMAIN_CHECKS[field](text) is in_domain, (field, text)
        canonical = in_domain and member(PINS[field], text)
        assert (in_domain and _CANONICAL_CHECKS[field](text)) is canonical, (field, text)

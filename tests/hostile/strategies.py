"""Hypothesis strategies of hostile inputs for every target of the fuzzing campaign."""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.hostile.corpus import (
    ACCEPTED_RISKS_SEED,
    HOSTILE_SCALARS,
    SYNTAX_FRAGMENTS,
    proposal_seeds,
    valid_policy_documents,
    valid_policy_pairs,
    valid_policy_texts,
)
from tests.hostile.mutate import byte_mutated, mutated, serialized

#: Lone surrogates included: a JSON string may carry "\ud800", so tools can receive them.
ANY_CHARACTER = st.one_of(st.characters(), st.characters(categories=["Cs"]))

MIB = 1024 * 1024


def _bombs() -> st.SearchStrategy[str]:
    """Texts built to exhaust a parser: nesting, aliases, width, length, huge numbers."""
    depth = st.integers(1, 3000)
    return st.one_of(
        depth.map(lambda n: "version: 1\nx: " + "[" * n + "]" * n + "\n"),
        depth.map(lambda n: "version: 1\nx: " + "{a: " * n + "1" + "}" * n + "\n"),
        st.integers(1, 400).map(
            lambda n: "version: 1\n" + "".join(f"{'  ' * i}k{i}:\n" for i in range(n)) + "x\n"
        ),
        st.integers(1, 12).map(_laughs),
        st.integers(1, 30_000).map(lambda n: "version: 1\nx: [" + "0," * n + "0]\n"),
        st.integers(1, 200_000).map(lambda n: "version: 1\nx: '" + "a" * n + "'\n"),
        st.integers(1, 20_000).map(lambda n: "version: 1\nx: " + "9" * n + "\n"),
        st.integers(1, 20_000).map(lambda n: '{"version": 1' + ', "a": 1' * n + "}"),
        st.integers(1, 500).map(lambda n: "version: 1\n" + "- " * n + "x\n"),
        st.integers(1, 200).map(
            lambda n: "a: &a x\n" + "".join(f"a{i}: &a{i} *a\n" for i in range(n))
        ),
    )


def _laughs(levels: int) -> str:
    lines = ["version: 1", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


def raw_texts() -> st.SearchStrategy[str | bytes]:
    """Text and bytes with no structure, or YAML syntax pieces glued together."""
    fragments = st.lists(
        st.one_of(st.sampled_from(SYNTAX_FRAGMENTS), st.text(ANY_CHARACTER, max_size=8)),
        min_size=1,
        max_size=40,
    ).map("".join)
    return st.one_of(
        fragments,
        fragments.map(lambda text: "version: 1\n" + text),
        st.text(ANY_CHARACTER, max_size=200),
        st.binary(max_size=200),
        byte_mutated(valid_policy_texts()),
        _bombs(),
    )


def structured_policies(gentle: bool = False) -> st.SearchStrategy[str | bytes]:
    """A valid policy of tests/data, mutated at random places, serialised."""
    documents = mutated(valid_policy_documents(), gentle=gentle, most=2 if gentle else 4)
    return documents.flatmap(lambda document: serialized(document, gentle))


def policy_inputs() -> st.SearchStrategy[str | bytes]:
    """Any policy input: valid, gently or roughly mutated, raw."""
    return st.one_of(
        st.sampled_from(valid_policy_texts()),
        structured_policies(gentle=True),
        structured_policies(),
        raw_texts(),
    )


@st.composite
def policy_pairs(draw: st.DrawFn) -> tuple[str | bytes, str | bytes]:
    """(candidate, boundary) with at least one side hostile.

    Half are a valid pair of tests/data with one side gently mutated (those reach the
    solver), a fifth mix gentle mutants with other valid policies, the rest are anything.
    """
    share = draw(st.integers(0, 99))
    if share < 50:
        candidate, boundary = draw(st.sampled_from(valid_policy_pairs()))
        mutant = draw(
            mutated([yaml.safe_load(candidate if share % 2 else boundary)], gentle=True, most=2)
        )
        text = draw(serialized(mutant, True))
        return (text, boundary) if share % 2 else (candidate, text)
    valid = st.sampled_from(valid_policy_texts())
    gentle = structured_policies(gentle=True)
    if share < 70:
        return draw(st.one_of(st.tuples(gentle, valid), st.tuples(valid, gentle)))
    anything = policy_inputs()
    return draw(st.one_of(st.tuples(anything, valid), st.tuples(valid, anything)))


# -- proposals -------------------------------------------------------------------------------


def _document_text(seeds: list[Any]) -> st.SearchStrategy[str | bytes | None]:
    """A document given to assess_proposal: the seed, a mutant, raw text or nothing."""
    return st.one_of(
        st.none(),
        st.sampled_from(seeds).map(json.dumps),
        mutated(seeds).flatmap(serialized),
        raw_texts(),
    )


def _agent_body(proposal: dict[str, Any]) -> dict[str, Any]:
    return {
        "intent_summary": "reach the API",
        "operations": [
            {"addRule": {"ruleName": proposal.get("rule_name"), "rule": proposal.get("rule")}}
        ],
    }


def _mostly(draw: st.DrawFn, percent: int = 75) -> bool:
    """True ``percent`` % of the time: keep most inputs valid so the rest reach deep."""
    return draw(st.integers(0, 99)) < percent


@st.composite
def proposal_inputs(draw: st.DrawFn) -> dict[str, Any]:
    """Keyword arguments of ``prover.proposal.assess_proposal``, some of them hostile."""
    seeds = list(proposal_seeds())
    seed = draw(st.sampled_from(seeds))
    proposals = [s["proposal"] for s in seeds] + [_agent_body(s["proposal"]) for s in seeds]
    current = seed["current"] if _mostly(draw) else draw(policy_inputs())
    share = draw(st.integers(0, 99))
    if share < 35:
        body = seed["proposal"] if share < 20 else _agent_body(seed["proposal"])
        proposal: str | bytes = json.dumps(body)
    elif share < 75:
        proposal = draw(
            mutated(proposals, gentle=True, most=2).flatmap(lambda d: serialized(d, True))
        )
    else:
        proposal = draw(st.one_of(mutated(proposals).flatmap(serialized), raw_texts()))
    credentials = (
        json.dumps(seed["credentials"])
        if _mostly(draw)
        else draw(_document_text([seed["credentials"]]))
    )
    return {
        "current": current,
        "proposal": proposal,
        "credentials": credentials,
        "accepted_risks": None if _mostly(draw) else draw(_document_text([ACCEPTED_RISKS_SEED])),
        "mode": draw(st.sampled_from([*["agent_authored"] * 5, *["mechanistic"] * 4, "x"])),
        "boundary": draw(st.one_of(st.none(), st.sampled_from(valid_policy_texts()))),
    }


# -- MCP tool arguments ------------------------------------------------------------------------

#: Prebuilt large strings: generating megabytes per example would dominate the run time.
HUGE_STRINGS: tuple[str, ...] = (
    "version: 1\n" + "#" * (4 * MIB),  # just over the 4 MiB input limit
    "version: 1\n#" + "\U0001f600" * (MIB + 1),  # over the limit in UTF-8 bytes only
    "version: 1\nx: '" + "a" * (MIB // 2) + "'\n",
    "\ud800" * 100_000,
)

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(ANY_CHARACTER, max_size=40),
)

JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=12,
)


def _as_text(value: Any) -> Any:
    """Bytes as the str a JSON client would send (undecodable bytes as lone surrogates)."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _hostile_text() -> st.SearchStrategy[Any]:
    return st.one_of(policy_inputs().map(_as_text), JSON_VALUES, st.sampled_from(HUGE_STRINGS))


def _check_result_text() -> st.SearchStrategy[Any]:
    document = {
        "result": "exceeds_boundary",
        "counterexample": {"domain": "filesystem", "access": "write", "path": "/tmp"},
    }
    return st.one_of(st.just(json.dumps(document)), mutated([document]).map(json.dumps))


def _timeout_argument(maximum: int, hostile: bool) -> st.SearchStrategy[Any]:
    if not hostile:
        return st.integers(1, 1500)
    return st.one_of(
        st.sampled_from([0, -1, maximum, maximum + 1, 2**63, 10**30, -(10**30)]),
        st.sampled_from(["100", "1e3", "", None, True, 1.5, 1e300, [1], {"ms": 1}]).map(
            copy.deepcopy
        ),
    )


def _argument(name: str, schema: dict[str, Any], hostile: bool) -> st.SearchStrategy[Any]:
    if name == "timeout_ms":
        return _timeout_argument(int(schema.get("maximum", 60_000)), hostile)
    if schema.get("type") == "integer":
        lowest, highest = schema.get("minimum", 0), schema.get("maximum", 1_000)
        if not hostile:
            return st.integers(lowest, min(highest, lowest + 20))
        return st.sampled_from(HOSTILE_SCALARS).map(copy.deepcopy)
    if "enum" in schema:
        return JSON_SCALARS if hostile else st.sampled_from(schema["enum"])
    if name == "result":
        return st.one_of(_check_result_text(), _hostile_text()) if hostile else _check_result_text()
    return _hostile_text()


def _well_formed(draw: st.DrawFn, tool: str, names: set[str]) -> dict[str, Any]:
    """Arguments of the right types: a hostile policy pair, or hostile proposal inputs."""
    base: dict[str, Any] = {}
    if {"candidate", "boundary"} <= names:
        candidate, boundary = draw(policy_pairs())
        base.update(candidate=_as_text(candidate), boundary=_as_text(boundary))
    if tool == "assess_proposal":
        given = draw(proposal_inputs())
        base.update({k: _as_text(v) for k, v in given.items() if k in names and v is not None})
    return base


@st.composite
def tool_arguments(draw: st.DrawFn, tool: str, input_schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for ``tool`` from its input schema.

    Most calls are well-formed (hostile content, right types); the rest put wrong types,
    out-of-range numbers, huge strings, missing and unknown keys in random places.
    """
    properties: dict[str, Any] = input_schema.get("properties", {})
    required = set(input_schema.get("required", []))
    base = _well_formed(draw, tool, set(properties))
    hostile = not _mostly(draw, 65)
    arguments: dict[str, Any] = {}
    for name, schema in properties.items():
        resolved = schema if isinstance(schema, dict) else {}
        if hostile and draw(st.integers(0, 9)) == 0:
            continue  # left out, required or not
        if name in base and not (hostile and draw(st.booleans())):
            arguments[name] = base[name]
        elif hostile or name in required or resolved.get("type") == "integer":
            arguments[name] = draw(_argument(name, resolved, hostile))
        elif name == "result" and draw(st.booleans()):
            arguments[name] = draw(_check_result_text())
    if hostile and draw(st.booleans()):
        arguments[draw(st.text(ANY_CHARACTER, max_size=10))] = draw(JSON_VALUES)
    return arguments

"""The reader's fast path against its event composer: the same data, or declined.

For every text here, ``read_simple`` either declines or returns exactly the data (types
included) the event composer returns, never for a text the composer refuses; and
``read_policy_data`` gives what ``read_policy_events`` gives, the same data or the same
error message and path. The texts: every policy under tests/data (the real-policy
corpus, the hostile files, the acceptance and proposal cases), hand-written variants
(anchors, flow and quoted style, tags, duplicate and merge keys, odd scalars, several
documents, comments, tabs, empty values, odd indentation), and seeded random mutations
of the corpus (characters and lines deleted, repeated or inserted). Counts, not times:
the fast path must take most of the corpus, or the comparison would prove little.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from prover.errors import PolicyLoadError
from prover.policy import reader, simple_yaml
from prover.policy.reader import read_policy_data, read_policy_events
from prover.policy.simple_yaml import read_simple
from tests.corpus import corpus_entries
from tests.support import boundary_cases, proposal_cases

DATA = Path(__file__).parents[2] / "data"


def tree(value: object) -> object:
    """Data with every value's exact type (``True``, ``1`` and ``1.0`` differ; NaN is
    equal to itself here)."""
    if isinstance(value, dict):
        return ("dict", tuple((type(k).__name__, k, tree(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", tuple(tree(item) for item in value))
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _outcome(read: object, text: str | bytes) -> tuple[object, ...]:
    try:
        return ("data", tree(read(text)))  # type: ignore[operator]
    except PolicyLoadError as error:
        return ("error", str(error), error.path)


def compare(text: str) -> bool:
    """Assert the fast path agrees with the event composer on ``text``; whether it took it."""
    expected = _outcome(read_policy_events, text)
    fast = read_simple(text, reader.limits())
    if fast is not None:
        assert expected == ("data", tree(fast)), text
    assert _outcome(read_policy_data, text) == expected, text
    return fast is not None


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        if "\n" in value:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def data_texts() -> list[str]:
    """Every policy text under tests/data: the real policies, the hostile files, and every
    multi-line string of the acceptance and proposal cases."""
    texts = [entry.text for entry in corpus_entries()]
    for path in sorted((DATA / "hostile").iterdir()):
        try:
            texts.append(path.read_bytes().decode("utf-8"))
        except UnicodeDecodeError:
            continue  # (read as bytes by the reader tests)
    texts.extend(_strings(boundary_cases()))
    texts.extend(_strings(proposal_cases()))
    return list(dict.fromkeys(texts))


def test_every_policy_under_tests_data_reads_the_same_and_most_take_the_fast_path() -> None:
    texts = data_texts()
    taken = sum(compare(text) for text in texts)
    corpus = [entry.text for entry in corpus_entries()]
    corpus_taken = sum(read_simple(text, reader.limits()) is not None for text in corpus)
    assert len(texts) > 600
    assert taken > len(texts) * 0.8
    assert corpus_taken >= 400  # of 418: the others have tags, anchors, CR or odd quoting


#: Variants that the fast path must take (plain values resolve by the YAML 1.2 core
#: schema; keys stay as written).
TAKEN = [
    "version: 1\n",
    "a: yes\nb: 0443\nc: 1:30\nd: ~\ne: .inf\nf: 0x1F\ng: -.INF\nh: .NaN\ni: 0o17\n",
    "a: 1e3\nb: 1_000\nc: +1\nd: -1\ne: 1.\nf: .5\ng: null\nh: NULL\ni: True\nj: tRue\n",
    "a: 2024-01-01\nb: 0b101\nc: 012\nd: -0\ne: '1'\nf: \"2\"\ng: 1 # one\nh: 0x\n",
    "1: a\ntrue: b\n0x10: d\nnull: e\n'~': f\n\"\": g\n",
    "a: [1, 2, {b: c}]\nd: {e: [1, 2], f: \"g\", 'h': 'i''j'}\nk: []\nl: {}\nm: [ ]\n",
    "a: [a,b]\nb: [ -1, -.5, .inf, ~, null, 'x', \"y\" ]\nc: {x: {y: {z: []}}}\n",
    "a: 'x # y'\nb: \"x # y\"\nc: 'x''y'\nd: \"it's\"\ne: ''\nf: \"\"\ng: \"a\"   # c\n",
    "# SPDX: NVIDIA CORPORATION & AFFILIATES\n---\nversion: 1 # c\n  # deeper comment\nb: 2\n",
    "--- # start\na: b#c\nd: e # f: g\nh: i  \nj:   k\n",
    "a:\nb:\nc: # comment\nd:\n  e:\n",
    "a:\n- 1\n- b: 2\n  c:\n  - 3\n- [4]\nd:\n    - x\n    -   y: z\n        w: v\n",
    "a:\n  b:\n    c:\n      - d: e\n        f:\n          g: h\n",
    "a: -1\nb: -.5\nc: [-1, -.5]\n",
    "a: é\nb: 'ü'\n# ω comment\nc: \xa0x\n",
    "a: '*.example.com'\nb: /usr/bin/*\nc: x*\n",
    "a: http://x:80/y\nc: x, y\ne: a - b\nf: a ? b\ng: x]\nh: x}y\n",
    "a: x&y\nb: x!y\nc: x|y\nd: x>y\ne: x%y\nf: x@y\ng: x`y\n",
    "a: {'<<': 1}\n'<<': 2\n",
    "a: 123456789012345678901234567890123456789\n",
    "a: x\n\n\n\nb: y\n",
]

#: Variants the fast path must decline (the composer reads or refuses them).
DECLINED = [
    "",
    "# only a comment\n",
    "---\n",
    "---\n...\n---\nversion: 1\n",
    "a: 1\n---\nb: 2\n",
    "a: 1\n...\n",
    "version",
    "[1, 2]",
    "- a\n",
    "  a: 1\n  b: 2\n",
    "{a: 1}\n",
    "version: 1\nversion: 1\n",
    '{"a": 1, "\\u0061": 2}',
    "a:\n  b: 1\n  b: 2\n",
    "a: {b: 1, b: 2}\n",
    "a: &x {b: 1}\nc: {<<: *x}\n",
    "<<: {a: 1}\n",
    "a: {!!merge '<<': 1}\n",
    "? [a, b]\n: 1\n",
    "? a\n: b\n",
    "a: &x [1]\nb: {*x : 1}\n",
    "a: *nowhere\n",
    "a: &x [*x]\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: ! 1\n",
    "a: !!int '1'\n",
    "a: !!binary aGVsbG8=\n",
    "%YAML 1.2\n---\na: 1\n",
    "a: [1\n",
    "a:\n\tb: 1\n",
    "a:\tb\n",
    "a: b\t# c\n",
    "a: 'unterminated\n",
    "a: 'x'y\n",
    'a: "x\\ty"\n',
    'a: "x\\u0041"\n',
    "a: |\n  x\n",
    "a: >-\n  x\n  y\n",
    "a: b\n  c\n",
    "a: b\n  # c\n  d\n",
    "a:\n  b\n",
    "a:\n    b: 1\n  c: 2\n",
    "a:\n  - x\n   - y\n",
    "a:\n  - x\n  b: y\n",
    "a: 1\n- x\n",
    "a:\n  -\n  - x\n",
    "a:\n- - x\n",
    "a: - b\n",
    "a: ? b\n",
    "a: : b\n",
    "a: b: c\n",
    "a: b:\n",
    "a b: c\n",
    "-a: c\n",
    "é: a\n",
    "~: c\n",
    "a: [a, b,]\n",
    "a: [a: b]\n",
    "a: [a b]\n",
    "a: {a}\n",
    '{"a":1}\n',
    "a: [b] c\n",
    "a: [x]y\n",
    "a: {x}y\n",
    "a: *.example.com\n",
    "a: 1\r\nb: 2\r\n",
    "\ufeffa: 1\n",
    "a: x\x85y\n",
    "a: x\u2028y\n",
    "a: 1234567890123456789012345678901234567890123\n",
    "a: [1234567890123456789012345678901234567890123]\n",
    "a: 1\nb: 2\nc: \x00\n",
    "k" * 1100 + ": 1\n",
    "a: [1, 2\n  , 3]\n",
    "a: --x\n",
    "a: -\n",
    "a:\n-\n  b: 1\n",
]


@pytest.mark.parametrize("text", TAKEN)
def test_variants_in_the_subset_take_the_fast_path_and_read_the_same(text: str) -> None:
    assert compare(text)


@pytest.mark.parametrize("text", DECLINED)
def test_variants_outside_the_subset_are_declined_and_read_the_same(text: str) -> None:
    assert not compare(text)


#: Per lowered limit: texts just within it (the fast path takes them) and just over it
#: (declined, so the composer reports the limit).
LIMIT_CASES = [
    (
        "MAX_EVENTS",
        20,
        ["a: [" + ", ".join(["1"] * 12) + "]\n"],
        ["a: [" + ", ".join(["1"] * 13) + "]\n"],
    ),
    ("MAX_NODES", 7, ["a: [1, 2]\nb: 3\n"], ["a: [1, 2]\nb: 3\nc: 4\n", "a: [1, 2, 3, 4, 5]\n"]),
    (
        "MAX_DEPTH",
        3,
        ["a:\n  b: [1]\n", "a:\n  b:\n    c: 1\n", "a:\n- b: 1\n"],
        ["a:\n  b: [[1]]\n", "a:\n  b:\n    c:\n      d: 1\n", "a:\n- b:\n  - 1\n"],
    ),
    (
        "MAX_MAPPING_KEYS",
        2,
        ["a: {b: 1, c: 2}\nd: 1\n"],
        ["a: {b: 1, c: 2, d: 3}\n", "a: 1\nb: 2\nc: 3\n", "a:\n- b: 1\n  c: 2\n  d: 3\n"],
    ),
    (
        "MAX_SEQUENCE_ITEMS",
        2,
        ["a: [1, 2]\nb:\n- 1\n- 2\n"],
        ["a: [1, 2, 3]\n", "a:\n- 1\n- 2\n- 3\n"],
    ),
    ("MAX_SCALAR_BYTES", 12, ["abc: defgh\n"], ["abc: defghij\n"]),  # input bytes bound them
]


@pytest.mark.parametrize(("name", "value", "within", "over"), LIMIT_CASES)
def test_limits_apply_on_the_fast_path(
    monkeypatch: pytest.MonkeyPatch, name: str, value: int, within: list[str], over: list[str]
) -> None:
    monkeypatch.setattr(reader, name, value)
    for text in within:
        assert compare(text), text
    for text in over:
        assert not compare(text), text


def test_nesting_near_the_depth_limit_reads_the_same() -> None:
    for depth in (63, 64, 65):
        block = "".join(f"{'  ' * level}k{level}:\n" for level in range(depth - 1))
        block += "  " * (depth - 1) + "k: v\n"
        flow = "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"
        assert compare(block) == (depth <= 64)
        assert compare(flow) == (depth <= 64)


def test_only_small_texts_take_the_fast_path() -> None:
    rules = "".join(f"  r{i}: {{host: h{i}.example, port: 443}}\n" for i in range(2_000))
    text = "version: 1\nnetwork_policies:\n" + rules
    assert len(text) > simple_yaml.MAX_SIMPLE_CHARS
    assert read_simple(text, reader.limits()) is None
    assert read_simple(text[: text.index("\n  r1000:") + 1], reader.limits()) is not None


class _Stop(Exception):
    pass


def test_the_fast_path_calls_the_checkpoint_which_may_stop_it() -> None:
    rules = "".join(f"  r{i}:\n    host: h{i}.example\n    port: 443\n" for i in range(400))
    text = "version: 1\nnetwork_policies:\n" + rules  # 1,202 lines, 18 KB
    flow = "a: [" + ", ".join(["{b: 1}"] * 3_000) + "]\n"  # 6,000 flow elements, 1 line
    for policy, expected in ((text, 2), (flow, 5)):  # a call every 512 lines / 1,024 items
        assert read_simple(policy, reader.limits()) is not None
        calls: list[int] = []
        data = read_policy_data(policy, checkpoint=lambda calls=calls: calls.append(1))
        assert data == read_policy_events(policy)
        assert len(calls) == expected

        def stop() -> None:
            raise _Stop

        with pytest.raises(_Stop):
            read_policy_data(policy, checkpoint=stop)
    small = "version: 1\nnetwork_policies:\n" + rules[: rules.index("  r100:")]
    assert read_policy_data(small, checkpoint=stop)  # 302 lines: no call


#: What mutations insert: YAML's indicators, spaces and breaks, and characters the fast
#: path refuses to read.
PIECES = [*":- #'\"[]{},\n&*!|>?%@`~.019aZ_/\\=+<", "\t", "é", "\x85", "\u2028", "\xa0"]
PIECES += ["  ", "- ", ": ", " #", "\n  ", "\n- ", "---\n", "...\n", "\x00", "''", '""']


def mutate(text: str, rng: random.Random) -> str:
    """``text`` with one to three random edits: characters deleted, repeated or inserted,
    or a line indented, dedented or repeated elsewhere."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        position = rng.randrange(len(text) + 1)
        kind = rng.random()
        if kind < 0.3:
            text = text[:position] + text[position + rng.randint(1, 3) :]
        elif kind < 0.5:
            end = min(len(text), position + rng.randint(1, 8))
            text = text[:position] + text[position:end] + text[position:]
        elif kind < 0.85:
            text = text[:position] + rng.choice(PIECES) + text[position:]
        else:
            lines = text.split("\n")
            line = rng.randrange(len(lines))
            if kind < 0.9:
                lines[line] = " " + lines[line]
            elif kind < 0.95:
                lines[line] = lines[line][1:]
            else:
                lines.insert(line, lines[rng.randrange(len(lines))])
            text = "\n".join(lines)
    return text


def test_random_mutations_of_the_corpus_read_the_same() -> None:
    rng = random.Random(20261203)
    corpus = [entry.text for entry in corpus_entries()]
    taken = total = 0
    for text in corpus:
        for _ in range(6):
            total += 1
            taken += compare(mutate(text, rng))
    # Many mutants stay in the subset (and valid), so the comparison reaches the data.
    assert total == 6 * len(corpus)
    assert taken > total // 4

"""Hostile inputs are refused quickly with a clear message, by both YAML back ends.

Small hostile files live in tests/data/hostile/; the large ones are generated here so the
repository does not carry megabytes. Work is counted, not timed (a one-second bound
failed on a loaded machine): the reader must refuse each input after at most
``EVENT_BOUND`` parser events, though the generated ones hold up to 200,000.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from prover.errors import PolicyLoadError
from prover.policy import reader
from prover.policy.loader import load_policy

HOSTILE = Path(__file__).parents[2] / "data" / "hostile"
#: Parser events the reader may consume before refusing a hostile input.
EVENT_BOUND = 20_000

FILES: dict[str, str] = {
    "alias_bomb.yaml": "YAML nodes, counting alias expansions",
    "python_object_apply.yaml": "unsupported YAML tag '!!python/object/apply:os.system'",
    "invalid_utf8.yaml": "policy file is not valid UTF-8",
    "duplicate_keys.yaml": "duplicate key 'network_policies.gh' at line 5",
    "duplicate_keys.json": "duplicate key 'process.run_as_user' at line 1",
    "merge_keys.yaml": "YAML merge keys ('<<') are not supported",
    "tabs.yaml": "invalid YAML at line 3, column 1",
    "empty.yaml": "policy is empty",
    "top_level_list.yaml": "policy must be a mapping at the top level, got a list",
    "multi_document.yaml": "exactly one YAML document; a second document starts at line 2",
    "version_2.yaml": "unsupported policy version 2; expected version 1",
    "version_missing.yaml": "missing required field 'version'",
}


def _nested_block(depth: int) -> str:
    lines = ["version: 1"] + [f"{'  ' * level}k{level}:" for level in range(depth)]
    return "\n".join(lines) + " x\n"


def _repeated_big_anchor() -> str:
    items = ", ".join(["x"] * 9_000)
    uses = "\n".join(f"u{i}: *big" for i in range(50))
    return f"version: 1\nbig: &big [{items}]\n{uses}\n"


GENERATED: dict[str, tuple[Callable[[], str | bytes], str]] = {
    "five_mebibytes": (
        lambda: b"version: 1\n" + b"#" * (5 * 1024 * 1024),
        "policy file exceeds the 4194304-byte input limit",
    ),
    "depth_1000_flow": (
        lambda: "version: 1\nx: " + "[" * 1000 + "]" * 1000 + "\n",
        "nesting depth exceeds the limit of 64",
    ),
    "depth_1000_block": (lambda: _nested_block(1000), "nesting depth exceeds the limit of 64"),
    "list_200000": (
        lambda: "version: 1\nx: [" + ", ".join(["0"] * 200_000) + "]\n",
        "list has more than 10000 elements (line 2, field 'x')",
    ),
    "block_list_200000": (
        lambda: "version: 1\nx:\n" + "- 0\n" * 200_000,
        "list has more than 10000 elements",
    ),
    "big_anchor_aliased_50_times": (
        _repeated_big_anchor,
        "limit of 100000 YAML nodes, counting alias expansions",
    ),
    "many_aliases": (
        lambda: "version: 1\na: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n",
        "more than 100 YAML aliases",
    ),
}


@pytest.fixture(params=["libyaml", "pure-python"])
def yaml_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run each case with the C parser (the default when present) and the pure one."""
    if request.param == "libyaml":
        if not hasattr(yaml, "CSafeLoader"):
            pytest.skip("PyYAML was built without libyaml")
        monkeypatch.setattr(reader, "_LOADER", yaml.CSafeLoader)
    else:
        monkeypatch.setattr(reader, "_LOADER", yaml.SafeLoader)
    yield request.param


def _refusal(text: str | bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """The refusal's message and the number of parser events read before it."""
    fed = 0
    feed = reader._Composer.feed

    def counting_feed(self: reader._Composer, event: yaml.events.Event) -> None:
        nonlocal fed
        fed += 1
        feed(self, event)

    monkeypatch.setattr(reader._Composer, "feed", counting_feed)
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(text)
    monkeypatch.setattr(reader._Composer, "feed", feed)
    return str(caught.value), fed


def test_the_hostile_corpus_holds_exactly_the_listed_files() -> None:
    assert sorted(path.name for path in HOSTILE.iterdir()) == sorted(FILES)


@pytest.mark.parametrize("name", sorted(FILES))
def test_hostile_file_is_refused_quickly_with_a_clear_message(
    name: str, yaml_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    message, events = _refusal((HOSTILE / name).read_bytes(), monkeypatch)
    assert FILES[name] in message
    assert events <= EVENT_BOUND


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_hostile_input_is_refused_quickly_with_a_clear_message(
    name: str, yaml_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    build, expected = GENERATED[name]
    message, events = _refusal(build(), monkeypatch)
    assert expected in message
    assert events <= EVENT_BOUND


def test_hostile_messages_are_single_sentences_without_tracebacks() -> None:
    for name in FILES:
        with pytest.raises(PolicyLoadError) as caught:
            load_policy((HOSTILE / name).read_bytes())
        message = str(caught.value)
        assert "\n" not in message
        assert "Traceback" not in message
        assert caught.value.__cause__ is None

"""``path_covered`` answers alike whether it compares every entry or looks up an index
of them (issue 24: 9,000 paths against 9,000 entries compared every pair)."""

from __future__ import annotations

import random

import pytest

from prover.environment.apply import path_covered
from prover.environment.document import Environment
from prover.environment.evidence import Evidence

NAMES = ("a", "b", "c", "lib", "usr", "etc")


def _random_path(rng: random.Random) -> str:
    return "/" + "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))


def _environment(rng: random.Random) -> Environment:
    symlinks = {}
    for _ in range(rng.randint(0, 6)):
        link = _random_path(rng)
        target = _random_path(rng) if rng.random() < 0.6 else rng.choice(NAMES)
        symlinks[link] = target
    complete = tuple(rng.choice(["/", "/a", "/usr", "/etc/b"]) for _ in range(rng.randint(0, 2)))
    return Environment(sha256="0" * 64, symlinks=symlinks, complete_beneath=complete)


def test_the_index_answers_as_the_comparison_of_every_entry() -> None:
    rng = random.Random(24)
    decided = {True: 0, False: 0, None: 0}
    for _ in range(400):
        env = _environment(rng)
        allowed = tuple(_random_path(rng) for _ in range(rng.randint(17, 40)))
        unknown = rng.random() < 0.2
        for _ in range(5):
            path = _random_path(rng)
            by_loop, by_index = Evidence(env), Evidence(env)
            expected = path_covered(path, list(allowed), unknown, by_loop)
            assert path_covered(path, allowed, unknown, by_index) == expected
            assert by_index.assumptions == by_loop.assumptions
            decided[expected] += 1
    assert all(decided.values())  # every answer occurred


def test_the_index_is_built_once_per_entry_list(monkeypatch: pytest.MonkeyPatch) -> None:
    env = Environment(sha256="0" * 64, complete_beneath=("/",))
    evidence = Evidence(env)
    allowed = tuple(f"/b/{index}" for index in range(500))
    resolved: list[str] = []
    original = evidence.resolve_path

    def counting(path: str) -> str | None:
        resolved.append(path)
        return original(path)

    monkeypatch.setattr(evidence, "resolve_path", counting)
    for index in range(500):
        assert path_covered(f"/a/{index}", allowed, False, evidence) is False
    assert len(resolved) == 500 + 500  # each entry once, each path once

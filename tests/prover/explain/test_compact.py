"""The compact explanation: every item once, one line each."""

from __future__ import annotations

from prover.explain import explain
from prover.explain.compact import compact, render_compact_text


def test_an_invalid_policy_names_each_problem_once() -> None:
    candidate = "version: 1\nfilesystem_policy: {read_onlyy: [/usr], read_write: 5}\n"

    short = compact(explain(candidate, "version: 1\n"))
    text = render_compact_text(short)

    assert short.result == "error" and short.reason is not None
    assert "2 problems" in short.reason
    assert text.count("read_onlyy") == 1 and text.count("must be a list") == 1
    assert short.analysis is None and short.detail == "compact"


def test_within_is_two_lines_and_full_detail_attaches_the_analysis() -> None:
    policy = "version: 1\nfilesystem_policy: {read_only: [/usr]}\n"
    explanation = explain(policy, policy)

    text = render_compact_text(compact(explanation))
    full = compact(explanation, "full")

    assert text.splitlines()[0] == "result: within_boundary"
    assert len(text.splitlines()) == 2
    assert full.analysis == explanation.model_dump(mode="json")

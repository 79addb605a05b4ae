"""The text rendering and the one-sentence summaries."""

from __future__ import annotations

from prover.explain import explain, render_text
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS


def test_the_text_lists_every_violation_its_fix_and_the_verification() -> None:
    text = render_text(explain(THREE_VIOLATIONS, BOUNDARY))

    assert text.startswith("result: exceeds_boundary\n")
    for number in (1, 2, 3):
        assert f"\nviolation {number}: " in text
    assert "fails on layer:" in text
    assert "fixed candidate within the original candidate: within_boundary" in text
    assert "fix verified: yes" in text
    assert "\nfixed candidate:\n  | version: 1\n" in text


def test_the_summary_is_one_sentence() -> None:
    explanation = explain(THREE_VIOLATIONS, BOUNDARY)

    assert explanation.summary.count(". ") == 0 and explanation.summary.endswith(".")
    assert "3 violation(s)" in explanation.summary


def test_a_within_result_needs_no_fix() -> None:
    text = render_text(explain("version: 1\nfilesystem_policy: {read_only: [/usr]}\n", BOUNDARY))

    assert "result: within_boundary" in text
    assert "fix: none needed" in text
    assert "fixed candidate:" not in text


def test_control_characters_in_policies_are_escaped() -> None:
    candidate = 'version: 1\nfilesystem_policy: {read_write: ["/a\\u001b[31m"]}\n'

    text = render_text(explain(candidate, "version: 1\nfilesystem_policy: {read_only: [/usr]}\n"))

    assert "\x1b" not in text
    assert "\\u{1b}" in text

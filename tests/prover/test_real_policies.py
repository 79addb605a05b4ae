"""Every real policy in the corpus, checked against itself.

A policy can never exceed itself, and a policy the upstream accepts must never be an
``error``. Narrowings and widenings of each (``tests/corpus_variants.py``) must never be
decided wrongly, and the rates at which they are decided must not regress.
"""

from __future__ import annotations

import hashlib

import pytest

from prover.api import check_boundary
from tests.corpus import CorpusEntry, corpus_entries
from tests.corpus_variants import variants

ENTRIES = list(corpus_entries())
MAINLINE_REFUSES = (
    "unknown field",
    "must be a mapping",
    "must be absolute",
    "landlock.compatibility",
    "missing required field",
)


def test_corpus_is_present_and_hashes_match() -> None:
    assert len(ENTRIES) >= 200
    for entry in ENTRIES:
        assert hashlib.sha256(entry.text.encode("utf-8")).hexdigest() == entry.sha256, entry.file
        assert entry.expect in ("valid", "invalid")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.file for e in ENTRIES])
def test_policy_against_itself(entry: CorpusEntry) -> None:
    result = check_boundary(entry.text, entry.text).outcome
    status = result.verdict.value
    assert status != "exceeds_boundary", entry.file
    assert status in ("within_boundary", "error"), (entry.file, result.reason)
    if entry.expect == "valid" and status == "error":
        # Only what the mainline parser refuses too may be an error: unknown fields (a
        # schema the runtime never merged), a list where a map is required, relative or
        # Windows paths, and the deliberately strict Landlock mode.
        reason = result.reason or ""
        assert any(marker in reason for marker in MAINLINE_REFUSES), (entry.file, reason)


def _loadable() -> list[CorpusEntry]:
    return [
        e
        for e in ENTRIES
        if e.expect == "valid" and check_boundary(e.text, e.text).outcome.verdict.value != "error"
    ]


def test_narrowings_and_widenings_are_decided_and_never_wrong() -> None:
    """Measured on this corpus: narrowings 419/428 within; network widenings all exceed.

    A writable path added beside a boundary that includes the image's working directory
    stays ``unsupported`` without environment evidence (that directory could be it).
    """
    decided: dict[str, int] = {"narrowing": 0, "network widening": 0}
    total: dict[str, int] = {"narrowing": 0, "network widening": 0}
    wrong: list[tuple[str, str, str]] = []
    for entry in _loadable():
        for variant in variants(entry.text):
            got = check_boundary(variant.text, entry.text).outcome.verdict.value
            if got in ("within_boundary", "exceeds_boundary") and got != variant.expected:
                wrong.append((entry.file, variant.what, got))
            kind = "narrowing" if variant.kind == "narrowing" else None
            if "new host" in variant.what:
                kind = "network widening"
            if kind is not None:
                total[kind] += 1
                decided[kind] += got == variant.expected
    assert wrong == []
    assert total["narrowing"] >= 400 and total["network widening"] >= 350
    assert decided["narrowing"] >= 0.97 * total["narrowing"], (decided, total)
    assert decided["network widening"] == total["network widening"], (decided, total)


def test_with_the_sandbox_image_evidence_every_widening_is_an_exceed() -> None:
    """A writable path added beside a boundary that includes the working directory is
    decided once the image's working directory and symlinks are known (issue 12)."""
    from pathlib import Path

    from prover.environment.document import load_environment

    data = Path(__file__).resolve().parents[2] / "server" / "data" / "sandbox-environment.yaml"
    env = load_environment(data.read_text(encoding="utf-8"))
    total = wrong = undecided = 0
    for entry in _loadable():
        for variant in variants(entry.text):
            if variant.kind != "widening":
                continue
            total += 1
            got = check_boundary(variant.text, entry.text, environment=env).outcome
            if got.verdict.value in ("within_boundary", "exceeds_boundary"):
                wrong += got.verdict.value != variant.expected
            else:
                undecided += 1
    assert total >= 700 and wrong == 0 and undecided == 0, (total, wrong, undecided)

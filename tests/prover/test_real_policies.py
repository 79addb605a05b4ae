"""Every real policy in the corpus, checked against itself.

A policy can never exceed itself, and a policy the upstream accepts must never be an
``error``. Narrowings and widenings of each (``tests/corpus_variants.py``) must never be
decided wrongly, and the rates at which they are decided must not regress.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from prover.api import check_boundary
from tests.corpus import CorpusEntry, corpus_entries
from tests.corpus_variants import variants
from tests.support import DATA

ENTRIES = list(corpus_entries())
#: What mainline OpenShell says of each corpus policy (tests/prover/runtime/
#: test_mainline_table.py compares the reading itself with it).
MAINLINE = json.loads((DATA / "mainline_validation.json").read_text(encoding="utf-8"))["corpus"]


def test_corpus_is_present_and_hashes_match() -> None:
    assert len(ENTRIES) >= 200
    for entry in ENTRIES:
        assert hashlib.sha256(entry.text.encode("utf-8")).hexdigest() == entry.sha256, entry.file
        assert entry.expect in ("valid", "invalid")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.file for e in ENTRIES])
def test_policy_against_itself(entry: CorpusEntry) -> None:
    """An error exactly when mainline refuses the policy, naming each of its violations;
    otherwise within itself."""
    result = check_boundary(entry.text, entry.text).outcome
    status = result.verdict.value
    answer = MAINLINE[entry.file]
    reason = result.reason or ""
    if answer["parse_sandbox_policy"] != "ok":
        assert status == "error" and "invalid policy: " in reason, (entry.file, reason)
    elif answer["validate_sandbox_policy"] or answer["find_endpoint_ambiguities"]:
        assert status == "error" and "the OpenShell runtime refuses it" in reason, entry.file
        for violation in answer["validate_sandbox_policy"]:
            assert violation in reason, (entry.file, violation)
        assert ("conflicting metadata" in reason) == bool(answer["find_endpoint_ambiguities"])
    else:
        assert status == "within_boundary", (entry.file, reason)


def _loadable() -> list[CorpusEntry]:
    return [
        e
        for e in ENTRIES
        if e.expect == "valid" and check_boundary(e.text, e.text).outcome.verdict.value != "error"
    ]


def test_narrowings_and_widenings_are_decided_and_never_wrong() -> None:
    """Measured on this corpus: narrowings 339/339 within; network widenings 309/309
    exceed (of the policies mainline runs; those it refuses are errors).

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
    assert total["narrowing"] >= 330 and total["network widening"] >= 300, total
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
    assert total >= 600 and wrong == 0 and undecided == 0, (total, wrong, undecided)

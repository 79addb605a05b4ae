"""Every real policy in the corpus, checked against itself.

A policy can never exceed itself, and a policy the upstream accepts must never be an
``error``. ``within_boundary`` is not asserted yet: the model is being extended (issue 11).
"""

from __future__ import annotations

import hashlib

import pytest

from prover.api import check_boundary
from tests.corpus import CorpusEntry, corpus_entries

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
    if entry.expect == "valid" and status == "error":
        # Only what the mainline parser refuses too may be an error: unknown fields (a
        # schema the runtime never merged), a list where a map is required, relative or
        # Windows paths, and the deliberately strict Landlock mode.
        reason = result.reason or ""
        assert any(marker in reason for marker in MAINLINE_REFUSES), (entry.file, reason)

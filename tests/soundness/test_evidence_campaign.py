"""Soundness pairs with environment evidence (:mod:`tests.soundness.evidence`), judged on
a real filesystem and the image's accounts, in both semantics."""

from __future__ import annotations

from collections import Counter

from tests.soundness.evidence import run_evidence_pair

SEED = 20_261_203
PAIRS = 150


def test_no_verdict_with_evidence_is_unsound_and_every_verdict_occurs() -> None:
    verdicts: Counter[str] = Counter()
    failures = []
    for index in range(PAIRS):
        findings, outcome = run_evidence_pair(SEED, index)
        failures.extend(findings)
        verdicts.update(outcome.values())
    assert not failures, "\n".join(f.render() for f in failures[:5])
    for verdict in ("within_boundary", "exceeds_boundary", "unsupported"):
        assert verdicts[verdict] >= 0.1 * 2 * PAIRS, verdicts

"""Fixes that keep access: how often explain's verified fix keeps more grant units than
deleting the violating rules outright, on exceeds pairs built from the real-policy corpus.

Pairs (candidate, boundary), each kept only when the check says ``exceeds_boundary``:

* the widenings of ``tests/corpus_variants.py`` (a new host rule, a new writable path)
  against the original policy;
* the original with ``/usr/bin/node`` added to the binaries of its first network rule
  (the agent's extra binary) against the original;
* two consecutive policies of one repository, each way.

Usage: ``python -m benchmarks.fix_retention [--limit N] [--timeout-ms MS]`` (Markdown).
"""

from __future__ import annotations

import argparse
import copy
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from prover.api import check_boundary
from prover.explain import explain
from prover.explain.document import dump_text
from prover.policy.reader import read_policy_data
from prover.results import Verdict
from tests.corpus import corpus_entries
from tests.corpus_variants import variants

EXTRA_BINARY = "/usr/bin/node"


def _extra_binary(text: str) -> str | None:
    data = read_policy_data(text)
    if not isinstance(data, dict) or not isinstance(data.get("network_policies"), dict):
        return None
    changed: dict[str, Any] = copy.deepcopy(data)
    for rule in changed["network_policies"].values():
        binaries = rule.get("binaries") if isinstance(rule, dict) else None
        if isinstance(binaries, list) and binaries:
            if any(isinstance(b, dict) and b.get("path") == EXTRA_BINARY for b in binaries):
                return None
            binaries.append({"path": EXTRA_BINARY})
            return dump_text(changed)
    return None


def pairs(limit: int) -> Iterator[tuple[str, str, str]]:
    """(kind, candidate, boundary) for up to ``limit`` corpus policies."""
    entries = [e for e in corpus_entries() if e.expect == "valid"][:limit]
    for entry in entries:
        try:
            widened = [v for v in variants(entry.text) if v.kind == "widening"]
        except (AttributeError, TypeError):  # a corpus text that is not a policy mapping
            continue
        for variant in widened:
            yield f"widening: {variant.what}", variant.text, entry.text
        extra = _extra_binary(entry.text)
        if extra is not None:
            yield "widening: an extra binary in a rule", extra, entry.text
    for first, second in pairwise(entries):
        if first.repo == second.repo:
            yield "same repository", first.text, second.text
            yield "same repository", second.text, first.text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--timeout-ms", type=int, default=20_000)
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    by_kind: Counter[tuple[str, str]] = Counter()
    for kind, candidate, boundary in pairs(args.limit):
        check = check_boundary(candidate, boundary, timeout_ms=args.timeout_ms)
        if check.outcome.verdict is not Verdict.EXCEEDS:
            continue
        counts["exceeds pairs"] += 1
        result = explain(candidate, boundary, timeout_ms=args.timeout_ms)
        kept = result.grants_kept
        if not result.fix_verified or kept is None:
            outcome = "no verified fix"
        elif kept.with_rule_deleted is None or kept.with_fix > kept.with_rule_deleted:
            outcome = "keeps more than deleting"
        else:
            outcome = "keeps no more than deleting"
        counts[outcome] += 1
        by_kind[(kind, outcome)] += 1
    print("| figure | pairs |\n|---|---|")
    names = ("exceeds pairs", "keeps more than deleting", "keeps no more than deleting")
    for name in (*names, "no verified fix"):
        print(f"| {name} | {counts[name]} |")
    print("\n| pair kind | outcome | pairs |\n|---|---|---|")
    for (kind, outcome), number in sorted(by_kind.items()):
        print(f"| {kind} | {outcome} | {number} |")


if __name__ == "__main__":
    main()

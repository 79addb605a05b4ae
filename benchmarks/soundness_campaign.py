"""The long soundness campaign: random related policy pairs judged by the concrete evaluator.

    python benchmarks/soundness_campaign.py --pairs 20000 [--seed N] [--jobs 2]
        [--start I] [--timeout-ms MS] [--relation-rate R] [--show N] [--evidence-pairs N]

Every pair is rebuilt from (seed, index), so a finding is reproduced with
``--seed N --start I --pairs 1``. Prints the count, the mix of verdicts and reason codes,
the metamorphic relations, the sampler's power, the time, and every unsound or failing
finding with both policies; exits 1 if any verdict was unsound or any other bug (crash,
replay failure, invalid witness, rejected generated input) was found.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.soundness.campaign import Options, Summary, run_campaign


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="first pair index")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout-ms", type=int, default=10_000)
    parser.add_argument("--relation-rate", type=float, default=1.0)
    parser.add_argument("--show", type=int, default=20, help="findings printed in full")
    parser.add_argument("--progress", type=int, default=1_000, help="print every N pairs")
    parser.add_argument(
        "--evidence-pairs",
        type=int,
        default=0,
        help="also run N pairs with environment evidence, judged on a real filesystem",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    options = Options(timeout_ms=args.timeout_ms, relation_rate=args.relation_rate)
    summary = Summary()
    start = time.perf_counter()
    indices = range(args.start, args.start + args.pairs)
    for result in run_campaign(args.seed, indices, options, jobs=args.jobs):
        summary.add(result)
        for finding in result.findings:
            if finding.failing:
                print(f"FINDING pair {result.index} (seed {args.seed}): {finding.kind}", flush=True)
        if args.progress and summary.pairs % args.progress == 0:
            elapsed = time.perf_counter() - start
            print(f"... {summary.pairs} pairs, {elapsed:.0f} s", file=sys.stderr, flush=True)
    wall = time.perf_counter() - start
    print(summary.report(args.seed, wall))
    shown = sorted(summary.findings, key=lambda item: (not item[1].unsound, item[0]))
    for index, finding in shown[: args.show]:
        print(f"\n=== pair {index} (seed {args.seed}) ===\n{finding.render()}")
    evidence_failures = _evidence_campaign(args) if args.evidence_pairs else 0
    return 1 if summary.failing or evidence_failures else 0


def _evidence_campaign(args: argparse.Namespace) -> int:
    from collections import Counter

    from tests.soundness.evidence import run_evidence_pair

    verdicts: Counter[str] = Counter()
    failures = 0
    start = time.perf_counter()
    for index in range(args.start, args.start + args.evidence_pairs):
        findings, outcome = run_evidence_pair(args.seed, index)
        verdicts.update(outcome.values())
        for finding in findings[: max(0, args.show - failures)]:
            print(f"\n=== evidence pair {index} (seed {args.seed}) ===\n{finding.render()}")
        failures += len(findings)
    wall = time.perf_counter() - start
    print(
        f"\nevidence pairs: {args.evidence_pairs} (x2 semantics) in {wall:.0f} s; verdicts "
        f"{dict(verdicts)}; findings {failures}"
    )
    return failures


if __name__ == "__main__":
    raise SystemExit(main())

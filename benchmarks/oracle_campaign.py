"""The soundness campaign judged by the independent sandbox oracle (issue 22).

    python benchmarks/oracle_campaign.py [--seed N] [--pairs N] [--start I] [--shrink] [--show N]
        [--no-evidence] [--corpus]

Each pair (seed, index) draws an image, its evidence document and a candidate/boundary
pair; the prover's verdict (``prover.api.check_boundary`` with that evidence) is judged
by ``tests/soundness/sandbox_oracle``, which is written from OpenShell's source and
imports nothing from the prover. Prints the verdict mix, the pairs the oracle does not
model, unsound passes and false exceeds by domain, and one example of each (shrunk with
``--shrink``). ``--no-evidence`` checks without the evidence document and judges only
``within_boundary`` (which must then hold in every image). ``--corpus`` checks every real
policy of ``tests/data/real_policies`` against itself in the standard image instead
(a refused policy must not be ``within`` itself). Exits 1 if any verdict was
unsound or a false exceed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.soundness.oracle_campaign import (
    Summary,
    render_example,
    run_corpus_self_pairs,
    run_pair,
    shrink,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--shrink", action="store_true", help="shrink each example shown")
    parser.add_argument("--show", type=int, default=20, help="examples printed (one per kind)")
    parser.add_argument("--no-evidence", action="store_true", help="judge within verdicts only")
    parser.add_argument("--corpus", action="store_true", help="real policies against themselves")
    args = parser.parse_args(argv)
    summary = Summary()
    start = time.perf_counter()
    if args.corpus:
        summary = run_corpus_self_pairs()
    for index in range(args.start, args.start + args.pairs) if not args.corpus else ():
        summary.add(run_pair(args.seed, index, evidence=not args.no_evidence))
    print(summary.report(args.seed))
    print(f"wall: {time.perf_counter() - start:.1f} s")
    for _, result in sorted(summary.examples.items())[: args.show]:
        print("-----")
        print(render_example(result, shrink(result) if args.shrink else None))
    return 1 if summary.unsound or summary.false_exceeds else 0


if __name__ == "__main__":
    sys.exit(main())

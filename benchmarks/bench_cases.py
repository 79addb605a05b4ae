"""Time every acceptance case of tests/data in-process, grouped by the stage that decides.

    python benchmarks/bench_cases.py [--repeat 5]

The generated pairs of bench_check.py are all decided before Z3 now; the acceptance
cases are where Z3, the probes and the other stages each decide some pairs. Prints, per
deciding stage (the receipt's ``decided_by``; ``-`` for errors and unsupported shapes),
the number of cases and the median and p95 of each case's median time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_check import load_average, percentile
from prover.api import check_boundary
from tests.support import boundary_cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per case (median kept)")
    args = parser.parse_args(argv)
    print(f"load average before: {load_average()}")
    by_stage: dict[str, list[float]] = defaultdict(list)
    for case in boundary_cases():
        candidate, boundary = case.get("candidate"), case.get("boundary")
        if not isinstance(candidate, str) or not isinstance(boundary, str):
            continue
        times = []
        stage = "-"
        for _ in range(args.repeat):
            started = time.perf_counter()
            check = check_boundary(candidate, boundary, timeout_ms=10_000)
            times.append((time.perf_counter() - started) * 1000.0)
            stage = check.receipt.decided_by or "-"
        by_stage[stage].append(statistics.median(times))
    for stage, times in sorted(by_stage.items(), key=lambda item: -len(item[1])):
        print(
            f"{stage:<14} {len(times):>4} cases   median {statistics.median(times):8.1f} ms"
            f"   p95 {percentile(times, 0.95):8.1f} ms   max {max(times):8.1f} ms"
        )
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

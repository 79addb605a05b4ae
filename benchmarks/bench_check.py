"""Time ``check_boundary`` in-process on generated policies of growing size.

    python benchmarks/bench_check.py [--repeat N] [--sizes 1,16,128,1024]

Prints median and p95 per size and shape, the verdict, and which stage decided.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.policies import glob_heavy_pair, ordinary_pair, query_heavy_pair
from prover.api import check_boundary


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def measure(label: str, pair: tuple[str, str], repeat: int, timeout_ms: int) -> None:
    times: list[float] = []
    verdict = decided = ""
    for _ in range(repeat):
        start = time.perf_counter()
        check = check_boundary(pair[0], pair[1], timeout_ms=timeout_ms)
        times.append((time.perf_counter() - start) * 1000)
        verdict = check.outcome.verdict.value
        decided = check.outcome.decided_by or "-"
    print(
        f"{label:<28} median {statistics.median(times):9.1f} ms   "
        f"p95 {_percentile(times, 0.95):9.1f} ms   {verdict} ({decided})",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1,16,128,1024")
    parser.add_argument("--timeout-ms", type=int, default=60_000)
    parser.add_argument("--near-limit", action="store_true", help="also 4,000 endpoints")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes: list[tuple[str, Callable[[int], tuple[str, str]]]] = [
        ("within", lambda n: ordinary_pair(n)),
        ("exceeds", lambda n: ordinary_pair(n, exceed=True)),
        ("glob-heavy", glob_heavy_pair),
        ("query-heavy", query_heavy_pair),
    ]
    for size in sizes:
        for name, make in shapes:
            repeat = args.repeat if size < 1024 else max(3, args.repeat // 2)
            measure(f"{size:>5} rules {name}", make(size), repeat, args.timeout_ms)
    if args.near_limit:
        cand, bound = ordinary_pair(512)
        # 512 rules x 4 endpoints per policy = 4,096 endpoints in all.
        cand = cand.replace("endpoints:\n", "endpoints:\n", 1)
        measure("near endpoint limit", _widen(cand, bound), 3, args.timeout_ms)
    return 0


def _widen(candidate: str, boundary: str) -> tuple[str, str]:
    import yaml

    def widen(text: str) -> str:
        doc = yaml.safe_load(text)
        for rule in doc["network_policies"].values():
            first = rule["endpoints"][0]
            rule["endpoints"] = [
                {**first, "port": port} if "port" in first else {**first, "ports": [port]}
                for port in (443, 8443, 9443, 10443)
            ]
        return yaml.safe_dump(doc, sort_keys=False)

    return widen(candidate), widen(boundary)


if __name__ == "__main__":
    raise SystemExit(main())

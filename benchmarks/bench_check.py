"""Time ``check_boundary`` in-process on generated policies of growing size.

    python benchmarks/bench_check.py [--repeat N] [--sizes 1,16,128,512,1024 (or "")]
        [--shapes within,exceeds,glob-heavy,query-heavy] [--near-limit]
        [--profile SHAPE:SIZE] [--json FILE]

A size N is a pair of N candidate rules and N boundary rules. The resource limits of
spec §4 count both files, so 512 + 512 is the largest pair (1,024 rules) that is really
checked; 1024 + 1024 shows how fast an oversized pair is refused (``resource_limit``).
``--near-limit`` adds 512 + 512 rules of 4 endpoints each: exactly 4,096 endpoints.

Prints median and p95 per size and shape (milliseconds, wall clock, one call at a time),
the verdict, which stage decided, and the load average before and after the run: other
work on the machine inflates the figures. ``--profile within:128`` runs cProfile on one
call and prints the 20 functions with the most cumulative time.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.policies import glob_heavy_pair, ordinary_pair, query_heavy_pair
from prover.api import check_boundary

Pair = tuple[str, str]

SHAPES: dict[str, Callable[[int], Pair]] = {
    "within": lambda n: ordinary_pair(n),
    "exceeds": lambda n: ordinary_pair(n, exceed=True),
    "glob-heavy": glob_heavy_pair,
    "query-heavy": query_heavy_pair,
}


def load_average() -> str:
    """The first three fields of /proc/loadavg (1, 5 and 15 minutes), or '?' elsewhere."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (p95 of fewer than 20 runs is the slowest run or close to it)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def near_limit_pair() -> Pair:
    """512 + 512 ordinary rules with 4 endpoints each (4,096 endpoints in all), still within."""
    import yaml

    def widen(text: str) -> str:
        doc = yaml.safe_load(text)
        for rule in doc["network_policies"].values():
            first = rule["endpoints"][0]
            # Ports shifted by 10,000 per copy keep each kind of endpoint on its own ports
            # (a wildcard host with allowed_ips must not share a port with the others).
            # Deep copies: shared objects would be dumped as YAML aliases (refused past 100).
            rule["endpoints"] = [_shifted(copy.deepcopy(first), 10_000 * k) for k in range(4)]
        return yaml.safe_dump(doc, sort_keys=False)

    candidate, boundary = ordinary_pair(512)
    return widen(candidate), widen(boundary)


def _shifted(endpoint: dict[str, Any], offset: int) -> dict[str, Any]:
    if "port" in endpoint:
        endpoint["port"] += offset
    else:
        endpoint["ports"] = [port + offset for port in endpoint["ports"]]
    return endpoint


def measure(label: str, pair: Pair, repeat: int, timeout_ms: int) -> dict[str, Any]:
    """Run the check ``repeat`` times; print and return median, p95 and the verdict."""
    times: list[float] = []
    verdict = decided = reason = ""
    for _ in range(repeat):
        start = time.perf_counter()
        check = check_boundary(pair[0], pair[1], timeout_ms=timeout_ms)
        times.append((time.perf_counter() - start) * 1000)
        verdict = check.outcome.verdict.value
        decided = check.outcome.decided_by or "-"
        reason = check.outcome.reason_code or ""
    row = {
        "label": label,
        "runs": repeat,
        "median_ms": round(statistics.median(times), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "verdict": verdict,
        "decided_by": decided,
        "reason_code": reason,
    }
    suffix = f" {reason}" if reason else ""
    print(
        f"{label:<32} median {row['median_ms']:9.1f} ms   p95 {row['p95_ms']:9.1f} ms   "
        f"{verdict} ({decided}){suffix}",
        flush=True,
    )
    return row


def profile(pair: Pair, timeout_ms: int) -> None:
    """cProfile one call and print where the time goes."""
    profiler = cProfile.Profile()
    profiler.enable()
    check_boundary(pair[0], pair[1], timeout_ms=timeout_ms)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(20)
    print(out.getvalue())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1,16,128,512,1024")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--timeout-ms", type=int, default=60_000)
    parser.add_argument("--near-limit", action="store_true", help="also 4,096 endpoints")
    parser.add_argument("--profile", metavar="SHAPE:SIZE", help="cProfile one call, then exit")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    if args.profile:
        shape, _, size = args.profile.partition(":")
        pair = near_limit_pair() if shape == "near-limit" else SHAPES[shape](int(size))
        check_boundary(*pair, timeout_ms=args.timeout_ms)  # warm imports first
        profile(pair, args.timeout_ms)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s]
    shapes = [s for s in args.shapes.split(",") if s]
    check_boundary("version: 1\n", "version: 1\n")  # imports are not part of a check
    load_before = load_average()
    print(f"load average before: {load_before}", flush=True)
    rows: list[dict[str, Any]] = []
    for size in sizes:
        for name in shapes:
            repeat = args.repeat if size < 512 else max(3, args.repeat // 2)
            label = f"{size:>4} + {size:<4} rules {name}"
            rows.append(measure(label, SHAPES[name](size), repeat, args.timeout_ms))
    if args.near_limit:
        rows.append(measure("4,096 endpoints (512 + 512)", near_limit_pair(), 3, args.timeout_ms))
    load_after = load_average()
    print(f"load average after: {load_after}", flush=True)
    if args.json:
        document = {"load_before": load_before, "load_after": load_after, "rows": rows}
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

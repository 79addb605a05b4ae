"""Deadlines and load over streamable HTTP, and the gain of the result cache.

    python benchmarks/load_http.py load [--clients 200] [--calls 2000] [--slow-share 0.1]
        [--slow-timeout-ms 500,2000] [--fast-timeout-ms 30000] [--cache-size 0]
        [--abandon 8] [--client-processes 1] [--json FILE]
    python benchmarks/load_http.py cache [--repeat 30] [--json FILE]

``load`` starts ``policy-prover serve --transport streamable-http`` on a free loopback
port, runs ``--clients`` concurrent MCP clients making ``--calls`` check_boundary calls
in total (fast cases from tests/data and, for ``--slow-share`` of them, the slow pair of
tests/load/slow_pair.yaml with a timeout drawn from ``--slow-timeout-ms``), probes
``/health``, ``tools/list`` and a trivial check meanwhile, then abandons ``--abandon`` slow
calls mid-check and watches the server's CPU. It prints calls lost, lateness (latency
minus the call's timeout_ms), latency percentiles, the server's peak RSS (VmHWM) and the
probe latencies. ``--cache-size 0`` (the default here) makes every call really run.

``cache`` compares a check answered cold (a server without cache) with the same check
answered from the cache, over MCP on streamable HTTP.

Traffic goes to 127.0.0.1 only; every run is bounded in calls and time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio
from mcp import Client

from benchmarks.policies import glob_heavy_pair, ordinary_pair
from tests.load.driver import Record, abandon_slow_calls, percentiles, run_load, summarize
from tests.load.server_process import serve_http
from tests.load.workload import Call, calibrate_slow_pair, fast_pairs, plan, slow_pair
from tests.support import boundary_cases


def _range(text: str) -> tuple[int, int]:
    low, _, high = text.partition(",")
    return int(low), int(high or low)


def _print_json(title: str, data: Any) -> None:
    print(f"{title}: {json.dumps(data, indent=2, default=str)}", flush=True)


def _load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def _report_progress(records: list[Record], planned: int) -> None:
    started = time.monotonic()
    while True:
        await anyio.sleep(10)
        print(
            f"  {time.monotonic() - started:6.0f} s: {len(records)}/{planned} calls answered, "
            f"load average {_load_average()}",
            flush=True,
        )


# -- load ---------------------------------------------------------------------------------------


async def _load(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        extra = ["--cache-size", str(args.cache_size), "--log-level", "warning"]
        with serve_http(Path(scratch) / "server.log", extra=extra) as server:
            figures["server"] = {"pid": server.process.pid, "url": server.url}
            figures["rss_before_kib"] = server.peak_rss_kib()
            calls = plan(
                args.clients,
                args.calls,
                args.slow_share,
                args.fast_timeout_ms,
                args.slow_timeout_ms,
                seed=args.seed,
            )
            records: list[Record] = []
            async with anyio.create_task_group() as progress:
                progress.start_soon(_report_progress, records, args.calls)
                _, probes, wall = await run_load(
                    server, calls, records=records, client_processes=args.client_processes
                )
                progress.cancel_scope.cancel()
            figures["wall_s"] = round(wall, 1)
            figures["calls"] = summarize(records, args.calls)
            figures["throughput_calls_per_s"] = round(len(records) / wall, 1)
            figures["probes"] = {
                "health": percentiles(probes.health_s),
                "tools_list": percentiles(probes.tools_list_s),
                "trivial_check": percentiles(probes.trivial_check_s),
                "failures": probes.failures[:20],
                "failure_count": len(probes.failures),
            }
            figures["memory"] = {
                "peak_rss_kib": server.peak_rss_kib(),
                "rss_max_sampled_kib": max(probes.rss_kib, default=0),
                "rss_after_kib": server.rss_kib(),
                "threads_after": server.threads(),
            }
            if args.abandon:
                figures["abandon"] = await abandon_slow_calls(server, slow_pair(), args.abandon)
            figures["server_traceback_in_log"] = "Traceback" in server.log()


def run_load_command(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"arguments": {k: v for k, v in vars(args).items() if k != "run"}}
    calibration = calibrate_slow_pair(args.slow_timeout_ms[0])
    figures["slow_pair"] = calibration.__dict__ | {"keeps_z3_busy": calibration.slow}
    print(
        f"slow pair at timeout {calibration.timeout_ms} ms: {calibration.result}"
        f"/{calibration.reason_code} in {calibration.elapsed_ms} ms"
        + ("" if calibration.slow else "  -- NOT slow any more: find another pair"),
        flush=True,
    )
    figures["fast_cases"] = len(fast_pairs())
    started = time.monotonic()
    anyio.run(_load, args, figures)
    figures["total_s"] = round(time.monotonic() - started, 1)
    return figures


# -- cache ---------------------------------------------------------------------------------------


def _cache_pairs() -> dict[str, tuple[str, str]]:
    seed = next(c for c in boundary_cases() if c["id"] == "docs-fs-readonly-subset-within")
    return {
        "seed example (filesystem)": (seed["candidate"], seed["boundary"]),
        "16 REST rules": ordinary_pair(16),
        "128 REST rules": ordinary_pair(128),
        "16 glob-heavy rules": glob_heavy_pair(16),
    }


async def _latencies(url: str, pair: tuple[str, str], repeat: int) -> tuple[list[float], str]:
    call = Call("cache", pair[0], pair[1], 60_000)
    times: list[float] = []
    result = ""
    async with Client(url) as client:
        for _ in range(repeat):
            started = time.perf_counter()
            answer = await client.call_tool("check_boundary", call.arguments)
            times.append(time.perf_counter() - started)
            result = str((answer.structured_content or {}).get("result"))
    return times, result


async def _cache(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    rows: dict[str, dict[str, Any]] = figures.setdefault("pairs", {})
    with tempfile.TemporaryDirectory() as scratch:
        for size in (0, 256):
            extra = ["--cache-size", str(size), "--log-level", "warning"]
            with serve_http(Path(scratch) / f"server-{size}.log", extra=extra) as server:
                async with Client(server.url) as warm_up:
                    await warm_up.list_tools()
                for label, pair in _cache_pairs().items():
                    times, result = await _latencies(server.url, pair, args.repeat)
                    row = rows.setdefault(label, {"result": result})
                    if size == 0:
                        cold = percentiles(times)
                        row["cold_p50_ms"], row["cold_p95_ms"] = cold["p50_ms"], cold["p95_ms"]
                    else:
                        hits = percentiles(times[1:])
                        row["first_call_ms"] = round(times[0] * 1000, 1)
                        row["cached_p50_ms"], row["cached_p95_ms"] = hits["p50_ms"], hits["p95_ms"]
    for row in rows.values():
        row["speedup_p50"] = round(row["cold_p50_ms"] / max(row["cached_p50_ms"], 0.1), 1)


def run_cache_command(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    anyio.run(_cache, args, figures)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    load = commands.add_parser("load", help="concurrent clients, deadlines, memory, abandonment")
    load.add_argument("--clients", type=int, default=200)
    load.add_argument("--calls", type=int, default=2000)
    load.add_argument("--slow-share", type=float, default=0.1)
    load.add_argument("--slow-timeout-ms", type=_range, default=(500, 2000), metavar="LOW,HIGH")
    load.add_argument("--fast-timeout-ms", type=int, default=30_000)
    load.add_argument("--cache-size", type=int, default=0)
    load.add_argument("--abandon", type=int, default=8, help="slow calls to abandon (0: skip)")
    load.add_argument(
        "--client-processes",
        type=int,
        default=1,
        help="spread the clients over this many processes (progress then shows only "
        "finished processes)",
    )
    load.add_argument("--seed", type=int, default=1)
    load.set_defaults(run=run_load_command)
    cache = commands.add_parser("cache", help="cold vs cached check latency over MCP")
    cache.add_argument("--repeat", type=int, default=30)
    cache.set_defaults(run=run_cache_command)
    for sub in (load, cache):
        sub.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    load_before = _load_average()
    figures = args.run(args)
    figures["load_average"] = {"before": load_before, "after": _load_average()}
    _print_json(args.command, figures)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

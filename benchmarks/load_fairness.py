"""Fair admission under a flood: one client floods slow checks, others make trivial ones.

    python benchmarks/load_fairness.py [--transport sse] [--flood 40] [--others 4]
        [--seconds 20] [--slow-timeout-ms 5000] [--json FILE]

Starts ``policy-prover serve`` on a free loopback port. One client (one SSE session, or
on streamable HTTP one ``mcp.Client`` whose calls use as many connections as it needs)
keeps ``--flood`` slow checks (tests/load/slow_pair.yaml, ``--slow-timeout-ms``) in flight
for ``--seconds``; ``--others`` clients, each its own session, make trivial checks
(``version: 1`` against itself, no cache) one after another meanwhile. It prints the
trivial checks' latency percentiles and the flood's lateness (latency and server time
minus ``timeout_ms``), the figures docs/PERFORMANCE.md records.

Traffic goes to 127.0.0.1 only; the run is bounded in time.
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
from mcp.client.sse import sse_client

from tests.load.driver import Record, percentiles, timed_call
from tests.load.server_process import ServerProcess, serve_http
from tests.load.workload import TRIVIAL, Call, slow_pair


def _client(server: ServerProcess, transport: str) -> Client:
    if transport == "sse":
        return Client(sse_client(f"{server.base}/sse", sse_read_timeout=600))
    return Client(server.url)


async def _flood(client: Client, call: Call, stop_at: float, records: list[Record]) -> None:
    while time.monotonic() < stop_at:
        records.append(await timed_call(client, call))


async def _trivial(client: Client, stop_at: float, records: list[Record]) -> None:
    call = Call("trivial", *TRIVIAL, timeout_ms=5_000)
    while time.monotonic() < stop_at:
        records.append(await timed_call(client, call))
        await anyio.sleep(0.05)


async def run(server: ServerProcess, args: argparse.Namespace) -> dict[str, Any]:
    candidate, boundary = slow_pair()
    slow = Call("slow", candidate, boundary, timeout_ms=args.slow_timeout_ms)
    flood_records: list[Record] = []
    trivial_records: list[Record] = []
    async with _client(server, args.transport) as flooder:
        stop_at = time.monotonic() + args.seconds
        async with anyio.create_task_group() as tg:
            for _ in range(args.flood):
                tg.start_soon(_flood, flooder, slow, stop_at, flood_records)
            await anyio.sleep(1.0)  # the flood takes what it can first
            for _ in range(args.others):

                async def other() -> None:
                    async with _client(server, args.transport) as client:
                        await _trivial(client, stop_at, trivial_records)

                tg.start_soon(other)
    lateness = [r.lateness_s for r in flood_records if not r.lost]
    server_lateness = [
        s for r in flood_records if (s := r.server_lateness_s) is not None and not r.lost
    ]
    outcomes: dict[str, int] = {}
    for record in [*flood_records, *trivial_records]:
        key = f"{record.kind}: {record.outcome}"
        outcomes[key] = outcomes.get(key, 0) + 1
    return {
        "transport": args.transport,
        "flood": args.flood,
        "others": args.others,
        "seconds": args.seconds,
        "slow_timeout_ms": args.slow_timeout_ms,
        "trivial_latency": percentiles([r.latency_s for r in trivial_records if not r.lost]),
        "flood_client_lateness": percentiles([max(0.0, v) for v in lateness]),
        "flood_server_lateness": percentiles([max(0.0, v) for v in server_lateness]),
        "outcomes": outcomes,
        "peak_rss_mib": round(server.peak_rss_kib() / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=("sse", "streamable-http"), default="sse")
    parser.add_argument("--flood", type=int, default=40)
    parser.add_argument("--others", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--slow-timeout-ms", type=int, default=5_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "server.log"
        extra = ["--transport", args.transport, "--cache-size", "0"]
        with serve_http(log, extra=extra) as server:
            figures = anyio.run(run, server, args)
            tracebacks = server.log().count("Traceback")
    figures["server_log_tracebacks"] = tracebacks
    figures["load_average"] = [round(v, 2) for v in (*load_before, *os.getloadavg())]
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Fair admission under a flood: one client floods slow checks, others make trivial ones.

    python benchmarks/load_fairness.py [--transport sse] [--flood 40] [--others 4]
        [--seconds 20] [--slow-timeout-ms 5000] [--tokens] [--same-address] [--json FILE]

Starts ``policy-prover serve`` on a free loopback port. One client (one SSE session, or
on streamable HTTP one ``mcp.Client`` whose calls use as many connections as it needs)
keeps ``--flood`` slow checks (tests/load/slow_pair.yaml, ``--slow-timeout-ms``) in flight
for ``--seconds``; ``--others`` clients, each its own session, make trivial checks
(``version: 1`` against itself, no cache) one after another meanwhile. It prints the
trivial checks' latency percentiles and the flood's lateness (latency and server time
minus ``timeout_ms``), the figures docs/RELIABILITY.md records. With ``--tokens`` the
server has two bearer tokens, the flood's and the others', and a token names a client;
without, a client is its address: the flood connects from 127.0.0.1, the others from
127.0.0.2 (two hosts; ``--same-address`` puts them on the flood's).

Traffic goes to 127.0.0.1 only; the run is bounded in time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.load.driver import Record, percentiles, timed_call
from tests.load.server_process import ServerProcess, serve_http
from tests.load.sources import http_client_from
from tests.load.workload import TRIVIAL, Call, slow_pair

FLOOD_TOKEN = "flood-token"
OTHER_TOKEN = "other-token"
#: Without tokens a client is its address: the flood and the others connect from two
#: loopback addresses (two hosts), unless ``--same-address``.
FLOOD_ADDRESS = "127.0.0.1"
OTHER_ADDRESS = "127.0.0.2"


@asynccontextmanager
async def _client(
    server: ServerProcess, transport: str, token: str | None, source: str = FLOOD_ADDRESS
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    factory = http_client_from(source)
    if transport == "sse":
        url = f"{server.base}/sse"
        stream = sse_client(
            url, headers=headers, sse_read_timeout=600, httpx_client_factory=factory
        )
        async with Client(stream) as client:
            yield client
        return
    async with factory(headers=headers) as http:
        async with Client(streamable_http_client(server.url, http_client=http)) as client:
            yield client


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
    flood_token, other_token = (FLOOD_TOKEN, OTHER_TOKEN) if args.tokens else (None, None)
    async with _client(server, args.transport, flood_token) as flooder:
        stop_at = time.monotonic() + args.seconds
        async with anyio.create_task_group() as tg:
            for _ in range(args.flood):
                tg.start_soon(_flood, flooder, slow, stop_at, flood_records)
            await anyio.sleep(1.0)  # the flood takes what it can first
            for _ in range(args.others):

                async def other() -> None:
                    source = FLOOD_ADDRESS if args.same_address else OTHER_ADDRESS
                    async with _client(server, args.transport, other_token, source) as client:
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
        "tokens": args.tokens,
        "same_address": args.same_address,
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
    parser.add_argument(
        "--tokens",
        action="store_true",
        help="serve with two bearer tokens, one for the flood and one for the others",
    )
    parser.add_argument(
        "--same-address",
        action="store_true",
        help="the others connect from the flood's address (one client without tokens)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "server.log"
        extra = ["--transport", args.transport, "--cache-size", "0"]
        env = {"POLICY_PROVER_TOKEN": f"{FLOOD_TOKEN},{OTHER_TOKEN}"} if args.tokens else None
        with serve_http(log, extra=extra, env=env) as server:
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

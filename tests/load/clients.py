"""A process of load clients: part of a load run's clients, outside the driver's process.

    python -m tests.load.clients http://127.0.0.1:PORT/mcp < plan.json

Reads a JSON list of clients (each a list of calls: kind, candidate, boundary,
timeout_ms) from stdin, runs them all at once as in :func:`tests.load.driver.run_client`,
and prints one JSON list of records. Spreading 200 clients over a few such processes
keeps one client event loop from being what the latencies measure.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import anyio

from tests.load.driver import Record, run_client
from tests.load.workload import Call


async def _run(url: str, plan: list[list[Call]]) -> list[Record]:
    records: list[Record] = []
    async with anyio.create_task_group() as clients:
        for calls in plan:
            clients.start_soon(run_client, url, calls, records)
    return records


def main() -> int:
    url = sys.argv[1]
    plan = [[Call(**call) for call in client] for client in json.load(sys.stdin)]
    records = anyio.run(_run, url, plan)
    json.dump([asdict(record) for record in records], sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

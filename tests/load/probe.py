"""A separate process that measures how quickly a loaded server answers small requests.

    python -m tests.load.probe http://127.0.0.1:PORT [--every 0.1]

Until its stdin closes it polls ``GET /health`` every ``--every`` seconds and, every
fifth round, sends ``tools/list`` and a trivial ``check_boundary`` on one MCP session;
then it prints one JSON object with the latencies (seconds) and failures. Running apart
from the load generator keeps the generator's own event loop out of the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import anyio
import anyio.to_thread
import httpx2
from mcp import Client

TRIVIAL = {"candidate": "version: 1\n", "boundary": "version: 1\n", "timeout_ms": 5000}


async def _health(base: str, every_s: float, samples: dict[str, Any]) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        while True:
            started = time.monotonic()
            try:
                response = await http.get(f"{base}/health")
                response.raise_for_status()
                samples["health"].append(time.monotonic() - started)
            except Exception as exc:
                samples["failures"].append(f"health: {type(exc).__name__}: {exc}"[:200])
            await anyio.sleep(every_s)


async def _calls(base: str, every_s: float, samples: dict[str, Any]) -> None:
    async with Client(f"{base}/mcp") as client:
        while True:
            started = time.monotonic()
            try:
                with anyio.fail_after(60):
                    await client.list_tools()
                samples["tools_list"].append(time.monotonic() - started)
                started = time.monotonic()
                with anyio.fail_after(60):
                    result = await client.call_tool("check_boundary", TRIVIAL)
                document = result.structured_content or {}
                if document.get("result") != "within_boundary":
                    raise RuntimeError(f"trivial check answered {document.get('result')}")
                samples["trivial_check"].append(time.monotonic() - started)
            except Exception as exc:
                samples["failures"].append(f"call: {type(exc).__name__}: {exc}"[:200])
            await anyio.sleep(every_s * 5)


async def probe(base: str, every_s: float) -> dict[str, Any]:
    samples: dict[str, Any] = {"health": [], "tools_list": [], "trivial_check": [], "failures": []}
    async with anyio.create_task_group() as group:
        group.start_soon(_health, base, every_s, samples)
        group.start_soon(_calls, base, every_s, samples)
        await anyio.to_thread.run_sync(sys.stdin.read)  # until the parent closes stdin
        group.cancel_scope.cancel()
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("base", help="http://127.0.0.1:PORT")
    parser.add_argument("--every", type=float, default=0.1)
    args = parser.parse_args(argv)
    samples = anyio.run(probe, args.base, args.every)
    print(json.dumps(samples), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

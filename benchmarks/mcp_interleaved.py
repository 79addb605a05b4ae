"""The MCP stdio round trip of several source trees against the echo floor, interleaved.

    python benchmarks/mcp_interleaved.py TREE [TREE ...] [--calls 300]

Like ``speed_floor.py --only mcp``, but with one client per tree (each runs
``python -m server`` from that tree, result cache off) beside the echo client, and every
round calls each of them once in turn: load from other work then drifts alike for all,
so two trees (``main`` and a branch, each exported with ``git archive``) compare fairly
on a busy machine. Prints each median and its ratio to the echo median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WARMUP = 30


async def _run(trees: list[str], calls: int) -> dict[str, list[float]]:
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters

    from benchmarks.policies import ordinary_pair

    candidate, boundary = ordinary_pair(16)
    arguments = {"candidate": candidate, "boundary": boundary}

    def server(tree: str, args: list[str]) -> StdioServerParameters:
        env = {**os.environ, "PYTHONPATH": tree, "POLICY_PROVER_CACHE_SIZE": "0"}
        return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=tree)

    echo = server(str(ROOT), [str(ROOT / "benchmarks" / "speed_floor.py"), "--echo-server"])
    targets = [("echo", "echo", echo)]
    targets += [(tree, "check_boundary", server(tree, ["-m", "server"])) for tree in trees]
    times: dict[str, list[float]] = {name: [] for name, _, _ in targets}
    async with AsyncExitStack() as stack:
        clients = [
            (name, tool, await stack.enter_async_context(Client(params)))
            for name, tool, params in targets
        ]
        for round_ in range(WARMUP + calls):
            for name, tool, client in clients:
                started = time.perf_counter()
                answer = await client.call_tool(tool, arguments)
                elapsed = (time.perf_counter() - started) * 1000.0
                if answer.is_error:
                    raise RuntimeError(f"{name} failed: {answer}")
                if round_ >= WARMUP:
                    times[name].append(elapsed)
    return times


def main(argv: list[str] | None = None) -> int:
    import anyio

    from benchmarks.speed_floor import load_average

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", help="source trees to run `python -m server` from")
    parser.add_argument("--calls", type=int, default=300, help="measured calls per server")
    args = parser.parse_args(argv)
    trees = [str(Path(tree).resolve()) for tree in args.trees]
    before = load_average()
    times = anyio.run(_run, trees, args.calls)
    floor = statistics.median(times["echo"])
    print(f"load average {before} -> {load_average()}; echo median {floor:.2f} ms")
    for tree in trees:
        median = statistics.median(times[tree])
        print(f"  {tree}: median {median:.2f} ms = {median / floor:.2f}x echo")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

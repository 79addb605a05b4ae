"""Time the check through its faces: the CLI, MCP over stdio and over streamable HTTP.

    python benchmarks/bench_faces.py [--sizes 1,16,128] [--shapes within,glob-heavy,query-heavy]
        [--repeat N] [--cli-cold N] [--clients 1,2,4,8] [--calls-per-client N] [--json FILE]

Every server runs with ``--cache-size 0``, so each call really runs the check. Measured:

- CLI: the seed example (``read_only: [/usr]`` against ``[/usr, /etc]``), text output, a
  fresh process each time (cold start: interpreter, imports, check, exit); then
  ``check -o json`` per generated pair (also a fresh process per call).
- MCP over stdio (``python -m server``) and over streamable HTTP
  (``python -m server --transport streamable-http``): per-call latency of
  ``check_boundary`` as a client sees it, one call at a time on one connection.
- Server cold start: from spawning the process to the first answered ``tools/list``
  (stdio: spawn + initialize + list; HTTP: spawn, poll until the socket accepts, then
  initialize + list).
- Throughput over HTTP: N concurrent clients, each making ``--calls-per-client`` calls of
  the 16 + 16 ordinary pair; calls per second over the whole run.
- Peak memory: VmHWM of the HTTP server process after the throughput run.

Prints the load average before and after: other work on the machine inflates the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from benchmarks.bench_check import SHAPES, load_average, percentile

REPO_ROOT = str(Path(__file__).resolve().parent.parent)
CLI = str(Path(sys.executable).with_name("policy-prover"))
SEED_CANDIDATE = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n"
SEED_BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n    - /etc\n"
Rows = list[dict[str, Any]]
SERVER_ENV = {**os.environ, "PYTHONPATH": REPO_ROOT, "POLICY_PROVER_CACHE_SIZE": "0"}


def summary(label: str, times_ms: list[float], extra: str = "") -> dict[str, Any]:
    """Print and return median and p95 of ``times_ms``."""
    row = {
        "label": label,
        "runs": len(times_ms),
        "median_ms": round(statistics.median(times_ms), 1),
        "p95_ms": round(percentile(times_ms, 0.95), 1),
    }
    print(
        f"{label:<44} median {row['median_ms']:9.1f} ms   p95 {row['p95_ms']:9.1f} ms  {extra}",
        flush=True,
    )
    return row


# -- CLI ------------------------------------------------------------------------------------


def time_cli(args: list[str], repeat: int, expected_exit: int) -> list[float]:
    """Wall time of ``policy-prover ARGS`` as fresh processes."""
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([CLI, *args], capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
        if done.returncode != expected_exit:
            raise RuntimeError(f"policy-prover {args} exited {done.returncode}: {done.stderr!r}")
    return times


def bench_cli(pairs: dict[str, tuple[str, str]], repeat: int, cold: int, scratch: Path) -> Rows:
    rows: Rows = []
    (scratch / "seed-candidate.yaml").write_text(SEED_CANDIDATE)
    (scratch / "seed-boundary.yaml").write_text(SEED_BOUNDARY)
    seed = ["check", str(scratch / "seed-candidate.yaml"), "--boundary"]
    seed.append(str(scratch / "seed-boundary.yaml"))
    rows.append(summary("CLI cold start, seed example (text)", time_cli(seed, cold, 0)))
    for label, (candidate, boundary) in pairs.items():
        cand_file, bound_file = scratch / f"{label}-c.yaml", scratch / f"{label}-b.yaml"
        cand_file.write_text(candidate)
        bound_file.write_text(boundary)
        args = ["check", str(cand_file), "--boundary", str(bound_file), "-o", "json"]
        done = subprocess.run([CLI, *args], capture_output=True, check=False)
        result = json.loads(done.stdout)["result"]
        rows.append(summary(f"CLI {label}", time_cli(args, repeat, done.returncode), result))
    return rows


# -- MCP ------------------------------------------------------------------------------------


async def time_calls(
    client: Client, pairs: dict[str, tuple[str, str]], repeat: int, face: str
) -> Rows:
    rows: Rows = []
    for label, (candidate, boundary) in pairs.items():
        arguments = {"candidate": candidate, "boundary": boundary}
        await client.call_tool("check_boundary", arguments)  # first call warms lazy imports
        times: list[float] = []
        result = ""
        for _ in range(repeat):
            start = time.perf_counter()
            answer = await client.call_tool("check_boundary", arguments)
            times.append((time.perf_counter() - start) * 1000)
            result = (answer.structured_content or {}).get("result", "no structured result")
        rows.append(summary(f"MCP {face} {label}", times, result))
    return rows


async def bench_stdio(pairs: dict[str, tuple[str, str]], repeat: int, cold: int) -> Rows:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "server"], env=SERVER_ENV
    )
    starts: list[float] = []
    for _ in range(cold):
        start = time.perf_counter()
        async with Client(parameters) as client:
            await client.list_tools()
            starts.append((time.perf_counter() - start) * 1000)
    rows = [summary("stdio server cold start to first tools/list", starts)]
    async with Client(parameters) as client:
        rows += await time_calls(client, pairs, repeat, "stdio")
    return rows


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def spawn_http(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-m", "server", "--transport", "streamable-http"]
    command += ["--port", str(port), "--cache-size", "0", "--log-level", "warning"]
    with log.open("ab") as stderr:
        process = subprocess.Popen(
            command, env=SERVER_ENV, stdout=subprocess.DEVNULL, stderr=stderr
        )
    return process, f"http://127.0.0.1:{port}/mcp"


async def first_tools_list(url: str, process: subprocess.Popen[bytes]) -> None:
    """Poll until the port accepts a connection, then initialize and list the tools."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    while True:
        if process.poll() is not None:
            raise RuntimeError("the HTTP server exited during start-up")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            await anyio.sleep(0.01)
    async with Client(streamable_http_client(url)) as client:
        await client.list_tools()


def peak_memory_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


async def bench_http(
    pairs: dict[str, tuple[str, str]],
    repeat: int,
    cold: int,
    clients: list[int],
    calls_per_client: int,
    scratch: Path,
) -> tuple[Rows, Rows, dict[str, Any]]:
    log = scratch / "http.log"
    starts: list[float] = []
    for _ in range(cold):
        start = time.perf_counter()
        process, url = spawn_http(log)
        try:
            await first_tools_list(url, process)
            starts.append((time.perf_counter() - start) * 1000)
        finally:
            process.terminate()
            process.wait(timeout=30)
    rows = [summary("HTTP server cold start to first tools/list", starts)]
    process, url = spawn_http(log)
    try:
        await first_tools_list(url, process)
        async with Client(streamable_http_client(url)) as client:
            rows += await time_calls(client, pairs, repeat, "HTTP")
        throughput = [await _throughput(url, n, calls_per_client) for n in clients]
        memory = {"server_vmhwm_mib": round(peak_memory_kib(process.pid) / 1024, 1)}
        print(f"HTTP server peak memory (VmHWM): {memory['server_vmhwm_mib']} MiB", flush=True)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return rows, throughput, memory


async def _throughput(url: str, clients: int, calls_per_client: int) -> dict[str, Any]:
    candidate, boundary = SHAPES["within"](16)
    arguments = {"candidate": candidate, "boundary": boundary}
    latencies: list[float] = []
    timeout = httpx2.Timeout(30, read=300)
    connected = 0
    go = anyio.Event()

    async def one_client() -> None:
        nonlocal connected
        async with httpx2.AsyncClient(timeout=timeout) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                connected += 1
                if connected == clients:
                    go.set()
                await go.wait()  # time the calls, not the clients' initialize
                for _ in range(calls_per_client):
                    start = time.perf_counter()
                    answer = await client.call_tool("check_boundary", arguments)
                    latencies.append((time.perf_counter() - start) * 1000)
                    if (answer.structured_content or {}).get("result") != "within_boundary":
                        raise RuntimeError(f"unexpected answer: {answer}")

    start = 0.0

    async def start_clock() -> None:
        nonlocal start
        await go.wait()
        start = time.perf_counter()

    async with anyio.create_task_group() as group:
        group.start_soon(start_clock)
        for _ in range(clients):
            group.start_soon(one_client)
    elapsed = time.perf_counter() - start
    row = {
        "clients": clients,
        "calls": len(latencies),
        "calls_per_s": round(len(latencies) / elapsed, 1),
        "median_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
    }
    print(
        f"throughput {clients:>3} clients: {row['calls_per_s']:7.1f} calls/s  "
        f"(median {row['median_ms']} ms, p95 {row['p95_ms']} ms, {row['calls']} calls)",
        flush=True,
    )
    return row


# -- main -----------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1,16,128")
    parser.add_argument("--shapes", default="within,glob-heavy,query-heavy")
    parser.add_argument("--repeat", type=int, default=9, help="calls per pair and face")
    parser.add_argument("--cli-cold", type=int, default=9, help="CLI and server cold starts")
    parser.add_argument("--clients", default="1,2,4,8")
    parser.add_argument("--calls-per-client", type=int, default=20)
    parser.add_argument("--faces", default="cli,stdio,http")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    pairs = {
        f"{size} + {size} rules {shape}": SHAPES[shape](size)
        for size in (int(s) for s in args.sizes.split(","))
        for shape in args.shapes.split(",")
    }
    faces = set(args.faces.split(","))
    figures: dict[str, Any] = {"load_before": load_average()}
    print(f"load average before: {figures['load_before']}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if "cli" in faces:
            figures["cli"] = bench_cli(pairs, args.repeat, args.cli_cold, scratch)
        if "stdio" in faces:
            figures["stdio"] = anyio.run(bench_stdio, pairs, args.repeat, args.cli_cold)
        if "http" in faces:
            clients = [int(n) for n in args.clients.split(",")]
            http, throughput, memory = anyio.run(
                bench_http, pairs, args.repeat, args.cli_cold, clients,
                args.calls_per_client, scratch,
            )  # fmt: skip
            figures.update(http=http, throughput=throughput, memory=memory)
    figures["load_after"] = load_average()
    print(f"load average after: {figures['load_after']}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Async clients that load a streamable-HTTP server, probe it, and abandon calls.

Every client is a real ``mcp.Client`` on the server's URL (its own HTTP connection pool).
A call counts as *lost* when it raises or gets no answer within its deadline plus
:data:`LOST_AFTER_S`; lateness is the latency minus the call's own ``timeout_ms``. The
small requests that show whether the server stays responsive come from a separate probe
process (tests/load/probe.py), so that this process's busy event loop is not measured;
memory is sampled from /proc.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import anyio
import anyio.to_thread
from mcp import Client

from tests.load.server_process import REPO_ROOT, ServerProcess
from tests.load.workload import TRIVIAL, Call

#: A call not answered this long after its deadline is lost (the client gives up).
LOST_AFTER_S = 60.0


@dataclass
class Record:
    kind: str
    timeout_ms: int
    latency_s: float
    outcome: str  # the result value, "isError", or "lost: <why>"
    #: The check's own time, from the result's receipt: from the moment the tool handler
    #: started the check's clock (before waiting for admission) to its verdict.
    server_elapsed_s: float | None = None

    @property
    def lateness_s(self) -> float:
        return self.latency_s - self.timeout_ms / 1000.0

    @property
    def server_lateness_s(self) -> float | None:
        if self.server_elapsed_s is None:
            return None
        return self.server_elapsed_s - self.timeout_ms / 1000.0

    @property
    def lost(self) -> bool:
        return self.outcome.startswith("lost")


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50, p95, p99 and max in milliseconds (nearest rank)."""
    if not values:
        return {}
    ordered = sorted(values)

    def rank(fraction: float) -> float:
        index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
        return round(ordered[index] * 1000.0, 1)

    return {
        "count": len(ordered),
        "p50_ms": rank(0.50),
        "p95_ms": rank(0.95),
        "p99_ms": rank(0.99),
        "max_ms": round(ordered[-1] * 1000.0, 1),
        "mean_ms": round(statistics.fmean(ordered) * 1000.0, 1),
    }


async def timed_call(client: Client, call: Call) -> Record:
    started = time.monotonic()
    try:
        with anyio.fail_after(call.timeout_ms / 1000.0 + LOST_AFTER_S):
            result = await client.call_tool("check_boundary", call.arguments)
        document = result.structured_content or {}
        outcome = "isError" if result.is_error else str(document.get("result"))
        receipt = document.get("receipt") or {}
        elapsed_ms = receipt.get("elapsed_ms") if isinstance(receipt, dict) else None
    except Exception as exc:
        cause = _innermost(exc)
        outcome = f"lost: {type(cause).__name__}: {cause}"[:300]
        elapsed_ms = None
    server_s = elapsed_ms / 1000.0 if isinstance(elapsed_ms, (int, float)) else None
    return Record(call.kind, call.timeout_ms, time.monotonic() - started, outcome, server_s)


async def run_client(url: str, calls: Sequence[Call], records: list[Record]) -> None:
    """One MCP client making ``calls`` one after another."""
    made = 0
    try:
        async with Client(url) as client:
            for call in calls:
                records.append(await timed_call(client, call))
                made += 1
    except Exception as exc:  # the session itself failed: every call not made is lost
        cause = _innermost(exc)
        why = f"lost: session: {type(cause).__name__}: {cause}"[:300]
        for call in calls[made:]:
            records.append(Record(call.kind, call.timeout_ms, 0.0, why))


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


@dataclass
class Probes:
    """Latencies of /health and of trivial calls made while the load runs."""

    health_s: list[float] = field(default_factory=list)
    tools_list_s: list[float] = field(default_factory=list)
    trivial_check_s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)


def start_probe(server: ServerProcess, every_s: float) -> subprocess.Popen[bytes]:
    """The probe process (tests/load/probe.py), measuring until its stdin closes."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.load.probe", server.base, "--every", str(every_s)],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


def stop_probe(process: subprocess.Popen[bytes], probes: Probes) -> None:
    """Close the probe's stdin and add what it measured to ``probes``."""
    try:
        out, _ = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate(timeout=30)
        probes.failures.append("the probe process did not stop")
    try:
        samples = json.loads(out.decode() or "{}")
    except json.JSONDecodeError:
        probes.failures.append(f"the probe printed no figures (status {process.returncode})")
        return
    probes.health_s.extend(samples.get("health", []))
    probes.tools_list_s.extend(samples.get("tools_list", []))
    probes.trivial_check_s.extend(samples.get("trivial_check", []))
    probes.failures.extend(samples.get("failures", []))


async def _sample_memory(server: ServerProcess, probes: Probes, every_s: float) -> None:
    while True:
        probes.rss_kib.append(server.rss_kib())
        await anyio.sleep(every_s)


async def run_client_process(
    url: str, plan: Sequence[Sequence[Call]], records: list[Record]
) -> None:
    """Run ``plan``'s clients in a process of their own (tests/load/clients.py)."""
    document = json.dumps([[asdict(call) for call in calls] for calls in plan])
    done = await anyio.run_process(
        [sys.executable, "-m", "tests.load.clients", url],
        input=document.encode(),
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
        check=False,
    )
    if done.returncode != 0:
        why = f"lost: client process exited {done.returncode}: {done.stderr.decode()[-200:]}"
        records.extend(Record(c.kind, c.timeout_ms, 0.0, why) for calls in plan for c in calls)
        return
    records.extend(Record(**record) for record in json.loads(done.stdout))


async def run_load(
    server: ServerProcess,
    plan: Sequence[Sequence[Call]],
    probe_every_s: float = 0.1,
    records: list[Record] | None = None,
    client_processes: int = 1,
) -> tuple[list[Record], Probes, float]:
    """Run every client of ``plan`` at once, with probes; (records, probes, wall seconds).

    Pass ``records`` to watch the calls being answered while the load runs (with
    ``client_processes`` above 1, the clients run in that many processes of their own
    and their records arrive when each process ends).
    """
    records = [] if records is None else records
    probes = Probes()
    probe = start_probe(server, probe_every_s)
    started = time.monotonic()
    try:
        async with anyio.create_task_group() as background:
            background.start_soon(_sample_memory, server, probes, probe_every_s)
            async with anyio.create_task_group() as clients:
                if client_processes > 1:
                    for index in range(client_processes):
                        part = plan[index::client_processes]
                        clients.start_soon(run_client_process, server.url, part, records)
                else:
                    for calls in plan:
                        clients.start_soon(run_client, server.url, calls, records)
            wall = time.monotonic() - started
            background.cancel_scope.cancel()
    finally:
        await anyio.to_thread.run_sync(stop_probe, probe, probes)
    return records, probes, wall


def summarize(records: Sequence[Record], planned: int) -> dict[str, Any]:
    """No call lost, lateness, latency percentiles and the mix of results, per kind."""
    summary: dict[str, Any] = {
        "planned": planned,
        "answered": sum(1 for r in records if not r.lost),
        "lost": sum(1 for r in records if r.lost) + max(0, planned - len(records)),
        "max_lateness_ms": round(max((r.lateness_s for r in records), default=0.0) * 1000, 1),
    }
    for kind in sorted({r.kind for r in records}):
        group = [r for r in records if r.kind == kind]
        outcomes: dict[str, int] = {}
        for record in group:
            outcomes[record.outcome] = outcomes.get(record.outcome, 0) + 1
        summary[kind] = {
            "calls": len(group),
            "latency": percentiles([r.latency_s for r in group]),
            "max_lateness_ms": round(max(r.lateness_s for r in group) * 1000, 1),
            "lateness": percentiles([max(0.0, r.lateness_s) for r in group]),
            "server_lateness": percentiles(
                [max(0.0, late) for r in group if (late := r.server_lateness_s) is not None]
            ),
            "outcomes": dict(sorted(outcomes.items(), key=lambda item: -item[1])),
        }
    return summary


async def _abandoned(url: str, call: Call) -> None:
    async with Client(url) as client:
        await client.call_tool("check_boundary", call.arguments)


def _cpu_rate(server: ServerProcess, seconds: float) -> float:
    """CPU seconds per second the server used over the next ``seconds`` (blocking)."""
    before, started = server.cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    return (server.cpu_seconds() - before) / (time.monotonic() - started)


async def abandon_slow_calls(
    server: ServerProcess, slow: tuple[str, str], count: int, run_for_s: float = 1.5
) -> dict[str, Any]:
    """Start ``count`` slow checks, drop their clients mid-check, and watch the server.

    Returns the server's CPU rate while they ran and after they were abandoned, how long
    until its CPU went quiet, which threads still burned CPU a second later, and the
    latency of the next check (a new text, so the cache cannot answer it).
    """
    call = Call("slow", slow[0], slow[1], 30_000)
    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(_abandoned, server.url, call)
        await anyio.sleep(run_for_s - 0.5)
        busy = await anyio.to_thread.run_sync(_cpu_rate, server, 0.5)
        group.cancel_scope.cancel()
    abandoned = time.monotonic()
    quiet_after_s = None
    while time.monotonic() - abandoned < 10.0:
        if await anyio.to_thread.run_sync(_cpu_rate, server, 0.1) < 0.15:
            quiet_after_s = time.monotonic() - abandoned
            break
    threads_before = server.thread_cpu_seconds()
    after = await anyio.to_thread.run_sync(_cpu_rate, server, 1.0)
    threads_after = server.thread_cpu_seconds()
    burning = sorted(
        tid
        for tid, seconds in threads_after.items()
        if seconds - threads_before.get(tid, 0.0) > 0.05
    )
    unique = Call("trivial", f"version: 1\n# after abandoning {time.time_ns()}\n", TRIVIAL[1], 5000)
    async with Client(server.url) as client:
        record = await timed_call(client, unique)
    return {
        "abandoned_calls": count,
        "cpu_rate_while_running": round(busy, 2),
        "cpu_quiet_after_ms": None if quiet_after_s is None else round(quiet_after_s * 1000),
        "cpu_rate_next_second": round(after, 3),
        "threads_still_burning": len(burning),
        "next_call_ms": round(record.latency_s * 1000, 1),
        "next_call_result": record.outcome,
    }

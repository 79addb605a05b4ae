"""Slow checks over MCP: cancellation frees the worker, the loop stays responsive, progress.

The core is replaced by a stand-in that runs in the runner's worker thread until its
budget is cancelled or expires, so the tests control exactly how long a check takes and
can see when its thread stops. Every wait is bounded with ``anyio.fail_after``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

import prover.run.runner
from prover.api import BoundaryCheck
from prover.results import CheckOutcome, ReasonCode, Receipt
from prover.run.budget import Budget
from server.app import create_server

pytestmark = pytest.mark.anyio

SLOW = "# slow\nversion: 1\n"
TRIVIAL = {"candidate": "version: 1\n", "boundary": "version: 1\n"}


class SlowCore:
    """Stands in for ``prover.api.check_boundary`` inside ``prover.run.runner``."""

    def __init__(self, real: Any, run_for_s: float | None = None) -> None:
        self.real = real
        self.run_for_s = run_for_s
        self.running = 0
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.cancelled_budgets = 0
        self._lock = threading.Lock()

    def __call__(self, candidate: str, boundary: str, *, budget: Budget, **_: Any) -> BoundaryCheck:
        if not candidate.startswith("# slow"):
            return self.real(candidate, boundary, budget=budget)
        with self._lock:
            self.running += 1
        self.started.set()
        began = time.monotonic()
        try:
            while not budget.cancelled and not budget.expired:
                if self.run_for_s is not None and time.monotonic() - began >= self.run_for_s:
                    break
                time.sleep(0.005)
        finally:
            with self._lock:
                self.running -= 1
                self.cancelled_budgets += budget.cancelled
            self.stopped.set()
        outcome = (
            CheckOutcome.inconclusive(ReasonCode.CANCELLED, "containment check was cancelled")
            if budget.cancelled
            else CheckOutcome.within(decided_by="test")
        )
        receipt = Receipt(candidate_sha256=None, boundary_sha256=None, z3_version="x", elapsed_ms=0)
        return BoundaryCheck(outcome=outcome, receipt=receipt)


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


@pytest.fixture
def concurrency_limit() -> Iterator[Any]:
    previous = prover.run.runner._limit
    yield prover.run.runner.set_concurrency_limit
    prover.run.runner.set_concurrency_limit(previous)


def install(monkeypatch: pytest.MonkeyPatch, run_for_s: float | None = None) -> SlowCore:
    core = SlowCore(prover.run.runner.check_boundary, run_for_s)
    monkeypatch.setattr("prover.run.runner.check_boundary", core)
    return core


async def test_a_cancelled_call_stops_its_worker_and_the_next_call_answers_promptly(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = install(monkeypatch)
    async with Client(create_server(), mode=mode) as client:
        with anyio.fail_after(20):
            with anyio.move_on_after(0.3):
                await client.call_tool("check_boundary", {**TRIVIAL, "candidate": SLOW})
            assert core.started.is_set()
            with anyio.fail_after(2):
                while not core.stopped.is_set():
                    await anyio.sleep(0.01)
            assert core.running == 0
            assert core.cancelled_budgets == 1
            began = time.monotonic()
            result = await client.call_tool("check_boundary", TRIVIAL)
            assert time.monotonic() - began < 5
    assert result.structured_content is not None
    assert result.structured_content["result"] == "within_boundary"


async def test_a_trivial_call_answers_while_slow_checks_run(
    mode: str, monkeypatch: pytest.MonkeyPatch, concurrency_limit: Any
) -> None:
    concurrency_limit(4)
    core = install(monkeypatch, run_for_s=15)
    async with Client(create_server(), mode=mode) as client:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(
                        client.call_tool, "check_boundary", {**TRIVIAL, "candidate": SLOW}
                    )
                while core.running < 3:
                    await anyio.sleep(0.01)
                began = time.monotonic()
                result = await client.call_tool("check_boundary", TRIVIAL)
                elapsed = time.monotonic() - began
                assert core.running == 3  # the slow checks were still running meanwhile
                tg.cancel_scope.cancel()
    assert result.structured_content is not None
    assert result.structured_content["result"] == "within_boundary"
    assert elapsed < 5


async def test_other_requests_are_served_while_every_check_slot_is_busy(
    mode: str, monkeypatch: pytest.MonkeyPatch, concurrency_limit: Any
) -> None:
    concurrency_limit(2)
    core = install(monkeypatch, run_for_s=15)
    async with Client(create_server(), mode=mode) as client:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(2):
                    tg.start_soon(
                        client.call_tool, "check_boundary", {**TRIVIAL, "candidate": SLOW}
                    )
                while core.running < 2:
                    await anyio.sleep(0.01)
                began = time.monotonic()
                tools = await client.list_tools()
                catalogue = await client.read_resource("policy-prover://reference/results")
                elapsed = time.monotonic() - began
                tg.cancel_scope.cancel()
    assert "check_boundary" in [t.name for t in tools.tools]
    assert catalogue.contents
    assert elapsed < 5


async def test_a_check_longer_than_a_moment_reports_progress_when_asked(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(monkeypatch, run_for_s=1.2)
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with Client(create_server(), mode=mode) as client:
        with anyio.fail_after(20):
            result = await client.call_tool(
                "check_boundary",
                {**TRIVIAL, "candidate": SLOW, "timeout_ms": 5000},
                progress_callback=on_progress,
            )
    assert result.structured_content is not None
    assert result.structured_content["result"] == "within_boundary"
    assert received, "no progress notification for a 1.2 s check"
    progress, total, message = received[0]
    assert total == 5000 and 0 < progress <= 5000
    assert message is not None and message.startswith("checking")

"""The async runner: a call queued for a worker slot does not outlive its deadline."""

from __future__ import annotations

import os
import threading
import time

import anyio
import pytest

from prover import runner
from prover.budget import Budget

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_call_queued_past_its_deadline_runs_at_once_instead_of_waiting() -> None:
    release = threading.Event()
    runner.set_concurrency_limit(1)
    try:

        def hold_the_slot(budget: Budget) -> str:
            release.wait(5)
            return "held"

        def report_expiry(budget: Budget) -> bool:
            return budget.expired

        async with anyio.create_task_group() as tg:
            tg.start_soon(runner.run_in_worker, hold_the_slot, Budget(10_000))
            await anyio.sleep(0.05)
            started = time.monotonic()
            with anyio.fail_after(3):
                expired = await runner.run_in_worker(report_expiry, Budget(200))
            waited = time.monotonic() - started
            release.set()
        assert expired is True
        assert waited < 1.5  # the slot stayed busy for up to 5 s
    finally:
        release.set()
        runner.set_concurrency_limit(max(1, os.cpu_count() or 1))

"""The CI slice of the load campaign: 20 concurrent clients, deadlines, abandoned calls.

A real ``policy-prover serve --transport streamable-http`` on loopback, without its result
cache so that every call runs. The bounds are generous (CI machines are noisy); the
figures of the full run (200 clients, 2,000 calls) are in docs/RELIABILITY.md, from
``benchmarks/load_http.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests.load.driver import abandon_slow_calls, run_load, summarize
from tests.load.server_process import ServerProcess, serve_http
from tests.load.workload import calibrate_slow_pair, plan, slow_pair

CLIENTS = 20
CALLS = 50
#: Allowed lateness over a call's own timeout_ms. Generous: solves queue for the two
#: solver slots on a noisy CI machine, where the event loop also lags.
LATENESS_BOUND_S = 15.0


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log = tmp_path_factory.mktemp("load") / "server.log"
    extra = ["--cache-size", "0", "--max-concurrent-solves", "2", "--log-level", "warning"]
    with serve_http(log, extra=extra) as running:
        yield running


def test_twenty_concurrent_clients_lose_no_call_and_meet_their_deadlines(
    http_server: ServerProcess,
) -> None:
    calls = plan(CLIENTS, CALLS, 0.1, fast_timeout_ms=20_000, slow_timeout_ms=(300, 600), cases=40)
    records, probes, _ = anyio.run(run_load, http_server, calls)
    summary = summarize(records, CALLS)
    assert summary["lost"] == 0, [r.outcome for r in records if r.lost]
    assert summary["answered"] == CALLS
    assert summary["max_lateness_ms"] < LATENESS_BOUND_S * 1000
    assert all(r.outcome != "isError" for r in records)
    assert probes.health_s and not probes.failures
    assert max(probes.health_s) < 5.0
    assert http_server.process.poll() is None
    assert "Traceback" not in http_server.log()


def test_abandoned_slow_calls_free_their_workers(http_server: ServerProcess) -> None:
    calibration = calibrate_slow_pair(1000)
    if not calibration.slow:
        pytest.skip(f"tests/load/slow_pair.yaml is no longer slow: {calibration}")
    figures: dict[str, Any] = anyio.run(abandon_slow_calls, http_server, slow_pair(), 2)
    assert figures["cpu_quiet_after_ms"] is not None, figures
    assert figures["cpu_quiet_after_ms"] < 3000, figures
    assert figures["threads_still_burning"] == 0, figures
    assert figures["next_call_result"] == "within_boundary"
    assert figures["next_call_ms"] < 3000, figures

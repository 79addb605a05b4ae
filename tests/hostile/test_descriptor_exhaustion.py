"""No log flood under descriptor exhaustion (issue 14): 1,100 idle connections at a
1,024-descriptor limit wrote 73 MB of "Too many open files" tracebacks in 15 s.

A server limited to 64 descriptors, asked for a connection cap of 1,000, lowers the cap
to fit (and says so). 150 connections at once may still run it out of descriptors
for a moment (asyncio accepts a burst before the extra connections are closed): that is
logged once, without traceback. Before, at shutdown, asyncio's scheduled accept retries
wrote a traceback each (13 MB, 8,192 tracebacks in this test). Counted in log lines."""

from __future__ import annotations

import logging
import os
import resource
import socket
import subprocess
import time
from pathlib import Path

from server.serving import _RateLimitedAcceptErrors
from tests.load.server_process import HOST, REPO_ROOT, free_port, serve_command, wait_for_health

DESCRIPTORS = 64
CONNECTIONS = 150


def test_the_accept_error_filter_passes_one_record_a_minute() -> None:
    limiter = _RateLimitedAcceptErrors()
    passed = 0
    for _ in range(1_000):
        record = logging.LogRecord(
            "asyncio",
            logging.ERROR,
            __file__,
            1,
            "socket.accept() out of system resource",
            None,
            (OSError, OSError(24, "Too many open files"), None),
        )
        if limiter.filter(record):
            passed += 1
            assert record.exc_info is None
    assert passed == 1 and limiter.suppressed == 999
    retry = logging.LogRecord(
        "asyncio",
        logging.ERROR,
        __file__,
        1,
        "Exception in callback BaseSelectorEventLoop._start_serving(...)",
        None,
        None,
    )
    assert not limiter.filter(retry)  # within the same minute
    other = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "something else", None, None)
    assert limiter.filter(other)


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


def test_descriptor_exhaustion_logs_no_flood(tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "server.log"
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "POLICY_PROVER_MAX_CONNECTIONS": "1000"}
    env.pop("POLICY_PROVER_TOKEN", None)
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            serve_command(port),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            preexec_fn=_limit_descriptors,
        )
    held: list[socket.socket] = []
    try:
        wait_for_health(port, process, log_path)
        for _ in range(CONNECTIONS):
            try:
                held.append(socket.create_connection((HOST, port), timeout=5))
            except OSError:
                break
        # Let the accept loop spin on the exhausted descriptors for a while.
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        for sock in held:
            sock.close()
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    assert "to fit the descriptor limit" in text
    # A burst may still run out while aborted connections close: said once, no more.
    assert text.count("out of system resource") <= 1
    assert "_start_serving" not in text
    assert "Traceback" not in text
    assert len(text) < 50_000

"""A real ``python -m server`` on stdio survives malformed JSON-RPC and keeps answering.

Hostile lines go to the subprocess's stdin before and after the handshake: garbage,
truncated JSON, the wrong ``jsonrpc`` version, unknown methods, batches, bad ids, invalid
UTF-8, unpaired surrogate escapes and lines of many megabytes. Afterwards a valid
``initialize``, ``tools/list`` and ``tools/call`` must be answered, stdout must carry
nothing but JSON-RPC, and closing stdin must end the process with status 0.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import server

REPO_ROOT = str(Path(server.__file__).resolve().parent.parent)
MIB = 1024 * 1024
ANSWER_S = 60.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 100,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "hostile-test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(request_id: int, name: str, arguments: Any) -> bytes:
    request = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(request).encode() + b"\n"


#: Lines no client should send. Requests among them use ids below 100.
HOSTILE_LINES: tuple[bytes, ...] = (
    b"garbage\n",
    b"\n",
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"\n',
    b'{"jsonrpc": "1.0", "id": 2, "method": "ping"}\n',
    b'{"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}}\n',
    b"\x00\xff\xfe\xed\xa0\x80\n",
    b"[]\n",
    b"{}\n",
    b"null\n",
    b"123\n",
    b'[{"jsonrpc": "2.0", "id": 4, "method": "ping"}]\n',
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}\n',
    b'{"jsonrpc": "2.0", "id": 5, "result": {}}\n',
    b'{"jsonrpc": "2.0", "id": 6, "error": {"code": 1}}\n',
    b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}}\n',
    b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "x"}\n',
    b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "\\ud800"}}\n',
    _call(9, "check_boundary", {"candidate": "x"}),
    b"x" * (12 * MIB) + b"\n",
    b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {"pad": "'
    + b"x" * (12 * MIB)
    + b'"}}\n',
)


class StdioServer:
    """The subprocess, with a thread that queues every stdout line."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server"],
            env={**os.environ, "PYTHONPATH": REPO_ROOT},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.seen: list[bytes] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        """The response to ``request_id``; every line on the way must be JSON-RPC."""
        while True:
            line = self.lines.get(timeout=ANSWER_S)
            if line is None:
                raise AssertionError(f"the server exited before answering {request_id}")
            self.seen.append(line)
            message = json.loads(line)
            assert message.get("jsonrpc") == "2.0"
            if message.get("id") == request_id:
                return dict(message)

    def close(self) -> int:
        """Close stdin (the client hangs up) and return the exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=30)
        finally:
            self.release()

    def release(self) -> None:
        """Kill the process if it still runs and close every pipe."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self.reader.join(timeout=30)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


@pytest.fixture
def stdio_server() -> Iterator[StdioServer]:
    running = StdioServer()
    try:
        yield running
    finally:
        running.release()


def _handshake(running: StdioServer) -> None:
    running.send(json.dumps(INITIALIZE).encode() + b"\n")
    assert running.answer(100)["result"]["serverInfo"]["name"] == "policy-prover"
    running.send(json.dumps(INITIALIZED).encode() + b"\n")


def _still_serves(running: StdioServer, first_id: int) -> None:
    listing = {"jsonrpc": "2.0", "id": first_id, "method": "tools/list"}
    running.send(json.dumps(listing).encode() + b"\n")
    tools = running.answer(first_id)["result"]["tools"]
    assert "check_boundary" in [tool["name"] for tool in tools]
    policy = "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n"
    running.send(_call(first_id + 1, "check_boundary", {"candidate": policy, "boundary": policy}))
    result = running.answer(first_id + 1)["result"]
    assert result["structuredContent"]["result"] == "within_boundary"


def test_hostile_lines_before_and_after_the_handshake_leave_the_server_answering(
    stdio_server: StdioServer,
) -> None:
    for line in HOSTILE_LINES:
        stdio_server.send(line)
    _handshake(stdio_server)
    for line in HOSTILE_LINES:
        stdio_server.send(line)
    unknown = stdio_server.answer(3)
    assert unknown["error"]["code"] == -32601  # method not found, not a crash
    _still_serves(stdio_server, 101)
    assert stdio_server.close() == 0


def test_a_policy_over_the_input_limit_on_stdio_is_an_invalid_input_result(
    stdio_server: StdioServer,
) -> None:
    _handshake(stdio_server)
    huge = "version: 1\n" + "#" * (5 * MIB)
    stdio_server.send(_call(101, "check_boundary", {"candidate": huge, "boundary": huge}))
    result = stdio_server.answer(101)["result"]
    assert result.get("isError") is not True
    assert result["structuredContent"]["result"] == "error"
    assert "input limit" in result["structuredContent"]["reason"]
    _still_serves(stdio_server, 102)
    assert stdio_server.close() == 0

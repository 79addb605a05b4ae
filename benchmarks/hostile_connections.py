"""The connection attacks of issue 24 against a real server with its default limits.

    python benchmarks/hostile_connections.py [--json FILE]

Starts ``policy-prover serve --transport streamable-http`` on a free loopback port with
one bearer token and, one after another:

- *streams*: the token holder opens 512 ``GET /mcp`` event streams and keeps them; then
  ``/health`` and a ``tools/list`` from another address (127.0.0.2) are timed;
- *idle*: 600 sockets that never send anything, renewed in two waves; ``/health`` is
  polled meanwhile and its slowest answer recorded;
- *head*: one request with a 70 KiB head, sent at once.

Prints the statuses each got and the latencies. Only 127.0.0.1/127.0.0.2 are used and
every socket is closed at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.load.server_process import HOST, ServerProcess, serve_http

TOKEN = "bench-token"


def _timed_health(port: int, source: str = HOST) -> tuple[int, float]:
    started = time.monotonic()
    connection = http.client.HTTPConnection(HOST, port, timeout=30, source_address=(source, 0))
    try:
        connection.request("GET", "/health")
        status = connection.getresponse().status
    except OSError:
        status = 0  # reset or refused
    finally:
        connection.close()
    return status, round((time.monotonic() - started) * 1000, 1)


def _timed_list(port: int, source: str) -> tuple[int, float]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    started = time.monotonic()
    connection = http.client.HTTPConnection(HOST, port, timeout=30, source_address=(source, 0))
    try:
        connection.request("POST", "/mcp", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        status = response.status
    except OSError:
        status = 0
    finally:
        connection.close()
    return status, round((time.monotonic() - started) * 1000, 1)


def _stream(port: int) -> tuple[socket.socket | None, int]:
    try:
        sock = socket.create_connection((HOST, port), timeout=30)
        sock.sendall(
            f"GET /mcp HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
        )
        head = sock.recv(4096)
    except OSError:
        return None, 0
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return sock, status


def streams(server: ServerProcess, count: int) -> dict[str, Any]:
    held: list[socket.socket] = []
    statuses: dict[int, int] = {}
    try:
        for _ in range(count):
            sock, status = _stream(server.port)
            statuses[status] = statuses.get(status, 0) + 1
            if sock is not None:
                held.append(sock)
        health = _timed_health(server.port)
        other = _timed_list(server.port, "127.0.0.2")
    finally:
        for sock in held:
            sock.close()
    return {"stream_statuses": statuses, "health": health, "other_tools_list": other}


def idle(server: ServerProcess, count: int, waves: int) -> dict[str, Any]:
    worst = 0.0
    statuses: dict[int, int] = {}
    for _ in range(waves):
        held = []
        try:
            for _ in range(count):
                try:
                    held.append(socket.create_connection((HOST, server.port), timeout=30))
                except OSError:
                    pass
            for _ in range(10):
                status, latency = _timed_health(server.port)
                statuses[status] = statuses.get(status, 0) + 1
                worst = max(worst, latency)
                time.sleep(0.1)
        finally:
            for sock in held:
                sock.close()
    return {"health_statuses": statuses, "health_max_ms": worst}


def head(server: ServerProcess, size: int) -> str:
    sock = socket.create_connection((HOST, server.port), timeout=30)
    try:
        pad = "a" * size
        sock.sendall(
            f"GET /health HTTP/1.1\r\nHost: {HOST}:{server.port}\r\nX-Pad: {pad}\r\n\r\n".encode()
        )
        return sock.recv(4096).split(b"\r\n", 1)[0].decode()
    except OSError as exc:
        return f"closed: {type(exc).__name__}"
    finally:
        sock.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        env = {"POLICY_PROVER_TOKEN": TOKEN}
        with serve_http(Path(scratch) / "server.log", env=env) as server:
            figures["streams_512"] = streams(server, 512)
            figures["idle_600"] = idle(server, 600, 2)
            figures["head_70_kib"] = head(server, 70 * 1024)
            figures["peak_rss_mib"] = round(server.peak_rss_kib() / 1024)
            figures["tracebacks"] = server.log().count("Traceback")
    figures["load_average"] = [round(v, 2) for v in (*load_before, *os.getloadavg())]
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

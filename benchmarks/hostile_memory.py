"""Memory per client under the issue 14 attacks, against a real SSE server.

    python benchmarks/hostile_memory.py [--json FILE]

Starts ``policy-prover serve --transport sse`` on a free loopback port and, one after
another: a session that never reads its stream posts 40 requests with an 8 MiB id; a
second one posts 1,500 tiny ``tools/list``; then 24 such sessions at once (12 from each
of two loopback addresses) post 8 MiB ids, then tiny ``tools/list``, each until refused;
then 40 uploads declare 10 MB and stall after 9 MB. Prints, for each, the requests
accepted and refused, the server's RSS after and its peak (``VmHWM``), and whether
``/health`` still answers.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.hostile.test_client_memory import _handshake, _open_stream, _post
from tests.load.server_process import HOST, ServerProcess, serve_http

MIB = 1024 * 1024


def _health(server: ServerProcess) -> bool:
    connection = http.client.HTTPConnection(HOST, server.port, timeout=30)
    try:
        connection.request("GET", "/health")
        return connection.getresponse().status == 200
    finally:
        connection.close()


def _unread(server: ServerProcess, count: int, id_bytes: int) -> dict[str, Any]:
    sock, endpoint = _open_stream(server)
    statuses: dict[int, int] = {}
    try:
        _handshake(server, endpoint)
        for index in range(count):
            message = {"jsonrpc": "2.0", "id": f"{'x' * id_bytes}{index}", "method": "tools/list"}
            status, _ = _post(server, endpoint, message)
            statuses[status] = statuses.get(status, 0) + 1
        rss = server.rss_kib()
    finally:
        sock.close()
    return {"statuses": statuses, "rss_mib": round(rss / 1024), "health": _health(server)}


def _unread_many(server: ServerProcess, sessions: int, count: int, id_bytes: int) -> dict[str, Any]:
    """``sessions`` non-reading sessions from each of two clients (loopback addresses),
    all open at once, each posting up to ``count`` requests until one is refused."""
    statuses: dict[int, int] = {}
    socks = []
    try:
        for source in ("127.0.0.1", "127.0.0.2"):
            for _ in range(sessions):
                sock, endpoint = _open_stream(server, source)
                socks.append(sock)
                try:
                    _handshake(server, endpoint)
                except AssertionError:  # refused already: the global bound is reached
                    statuses[0] = statuses.get(0, 0) + 1
                    continue
                for index in range(count):
                    message = {
                        "jsonrpc": "2.0",
                        "id": f"{'x' * id_bytes}{index}",
                        "method": "tools/list",
                    }
                    status, _ = _post(server, endpoint, message)
                    statuses[status] = statuses.get(status, 0) + 1
                    if status != 202:
                        break
        rss = server.rss_kib()
        health = _health(server)
    finally:
        for sock in socks:
            sock.close()
    # statuses[0]: sessions whose handshake was refused
    return {"statuses": statuses, "rss_mib": round(rss / 1024), "health": health}


def _stalled_uploads(server: ServerProcess, count: int) -> dict[str, Any]:
    held: list[socket.socket] = []
    refused = 0
    try:
        for _ in range(count):
            sock = socket.create_connection((HOST, server.port), timeout=30)
            sock.sendall(
                b"POST /messages/?session_id=%s HTTP/1.1\r\nHost: %s:%d\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % (b"0" * 32, HOST.encode(), server.port, 10 * MIB)
            )
            sock.settimeout(0.2)
            try:
                if sock.recv(64).startswith(b"HTTP/1.1 503"):
                    refused += 1
                    sock.close()
                    continue
            except TimeoutError:
                pass
            sock.settimeout(30)
            sock.sendall(b"x" * (9 * MIB))
            held.append(sock)
        rss = server.rss_kib()
        health = _health(server)
    finally:
        for sock in held:
            sock.close()
    return {
        "held": len(held),
        "refused_503": refused,
        "rss_mib": round(rss / 1024),
        "health": health,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        with serve_http(Path(scratch) / "server.log", extra=["--transport", "sse"]) as server:
            figures["rss_start_mib"] = round(server.rss_kib() / 1024)
            figures["unread_8mib_ids"] = _unread(server, 40, 8 * MIB)
            figures["unread_tools_list"] = _unread(server, 1_500, 8)
            # 2 clients x 12 sessions at once: the global bounds.
            figures["sessions_8mib_ids"] = _unread_many(server, 12, 40, 8 * MIB)
            figures["sessions_tools_list"] = _unread_many(server, 12, 400, 8)
            figures["stalled_uploads"] = _stalled_uploads(server, 40)
            figures["peak_rss_mib"] = round(server.peak_rss_kib() / 1024)
            figures["tracebacks"] = server.log().count("Traceback")
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

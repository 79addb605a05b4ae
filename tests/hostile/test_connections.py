"""Connection limits hold before the token is checked (issue 14): a cap on open
connections, header and body timeouts, and 404 for /.well-known/* under a token.

Timeouts are set to a second here; the waits below only guard against hangs (they are
many times the timeouts), nothing asserts how fast anything is."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator

import pytest

from tests.load.server_process import HOST, ServerProcess, serve_http

LIMITS = {
    "POLICY_PROVER_MAX_CONNECTIONS": "8",  # one stream per client, 4 requests per client
    "POLICY_PROVER_MAX_STREAMS": "8",  # (2 by default: a quarter of the connections)
    "POLICY_PROVER_HEADER_TIMEOUT_S": "1",
    "POLICY_PROVER_BODY_TIMEOUT_S": "1",
}
HANG_GUARD_S = 20.0


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log = tmp_path_factory.mktemp("guard") / "server.log"
    with serve_http(log, env=LIMITS) as server:
        yield server


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(HANG_GUARD_S)
    try:
        return sock.recv(1024) == b""
    except (ConnectionResetError, TimeoutError):
        return False


def _health(port: int) -> int:
    connection = http.client.HTTPConnection(HOST, port, timeout=HANG_GUARD_S)
    try:
        connection.request("GET", "/health")
        return connection.getresponse().status
    finally:
        connection.close()


def test_idle_and_trickling_connections_are_closed(guarded_server: ServerProcess) -> None:
    idle = socket.create_connection((HOST, guarded_server.port))
    trickle = socket.create_connection((HOST, guarded_server.port))
    trickle.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
    assert _closed_by_server(idle)
    assert _closed_by_server(trickle)
    idle.close()
    trickle.close()


def test_a_stalled_body_is_closed(guarded_server: ServerProcess) -> None:
    sock = socket.create_connection((HOST, guarded_server.port))
    sock.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n{"
        % guarded_server.port
    )
    sock.settimeout(HANG_GUARD_S)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    sock.close()
    assert b"200 OK" not in data


def _stream(port: int, source: str = HOST) -> tuple[socket.socket, bytes]:
    """Open ``GET /mcp`` (an event stream) from ``source``; the socket and the status
    line the server answered with."""
    sock = socket.create_connection((HOST, port), timeout=HANG_GUARD_S, source_address=(source, 0))
    sock.sendall(
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n\r\n" % port
    )
    head = b""
    while b"\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, head.split(b"\r\n", 1)[0]


def test_idle_connections_over_the_cap_make_room_for_health(
    guarded_server: ServerProcess,
) -> None:
    """600 idle sockets, renewed as they timed out, kept /health out for 10 s per wave:
    at the cap, a new connection now closes the one idle the longest."""
    held = [socket.create_connection((HOST, guarded_server.port)) for _ in range(8)]
    try:
        for _ in range(3):  # more than the cap, again and again
            assert _health(guarded_server.port) == 200
        assert _closed_by_server(held[0])  # the oldest idle one made room
    finally:
        for sock in held:
            sock.close()
    assert "Traceback" not in guarded_server.log()


def test_many_addresses_cannot_make_every_connection_busy(
    guarded_server: ServerProcess,
) -> None:
    """Streams from eight addresses (one each, the cap per client): past three quarters
    of the connections busy, requests are refused (429), so a connection stays free or
    idle for /health. Busy connections are never closed to make room."""
    streams = []
    statuses = []
    try:
        for index in range(8):
            sock, status = _stream(guarded_server.port, f"127.0.0.{index + 2}")
            streams.append(sock)
            statuses.append(status.split(b" ")[1])
        # Six busy at most (fewer if an earlier test's request is still counted).
        assert 0 < statuses.count(b"200") <= 6 and statuses[-2:] == [b"429"] * 2
        assert _health(guarded_server.port) == 200
        for sock, status in zip(streams, statuses, strict=True):  # busy ones left alone
            if status != b"200":
                continue
            sock.settimeout(0.01)
            try:
                assert sock.recv(1) != b""
            except TimeoutError:
                pass
    finally:
        for sock in streams:
            sock.close()
    assert "Traceback" not in guarded_server.log()


def test_one_client_holds_at_most_its_share_of_streams(guarded_server: ServerProcess) -> None:
    """One token holder kept 512 GET /mcp streams open and every other client got
    connection resets. A client's streams beyond its cap are answered 429 and their
    connections stay idle (reclaimable); /health and other addresses are served."""
    for _ in range(100):  # an earlier test's streams count until the server sees them go
        first, status = _stream(guarded_server.port)
        if b" 200 " in status:
            break
        first.close()
        time.sleep(0.1)
    refused = []
    try:
        assert b" 200 " in status
        for _ in range(20):
            sock, status = _stream(guarded_server.port)
            refused.append(sock)
            assert b" 429 " in status
        assert _health(guarded_server.port) == 200
        other, status = _stream(guarded_server.port, "127.0.0.9")
        other.close()
        assert b" 200 " in status
    finally:
        first.close()
        for sock in refused:
            sock.close()


def _send_head(port: int, header_bytes: int) -> bytes:
    sock = socket.create_connection((HOST, port), timeout=HANG_GUARD_S)
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Pad: %s\r\n\r\n" % (
        port,
        b"a" * header_bytes,
    )
    sock.sendall(head)  # all at once: h11's own limit only sees incomplete heads
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data:
                break
    except (ConnectionResetError, TimeoutError):
        pass
    sock.close()
    return data.split(b"\r\n", 1)[0]


def test_the_request_head_limit_holds_for_a_head_sent_at_once(
    guarded_server: ServerProcess,
) -> None:
    assert b" 431 " in _send_head(guarded_server.port, 70 * 1024)
    assert b" 200 " in _send_head(guarded_server.port, 60 * 1024)

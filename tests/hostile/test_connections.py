"""Connection limits hold before the token is checked (issue 14): a cap on open
connections, header and body timeouts, and 404 for /.well-known/* under a token.

Timeouts are set to a second here; the waits below only guard against hangs (they are
many times the timeouts), nothing asserts how fast anything is."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator

import pytest

from tests.load.server_process import HOST, ServerProcess, serve_http

LIMITS = {
    "POLICY_PROVER_MAX_CONNECTIONS": "8",
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


def test_connections_over_the_cap_are_refused_and_health_survives(
    guarded_server: ServerProcess,
) -> None:
    held = [socket.create_connection((HOST, guarded_server.port)) for _ in range(8)]
    try:
        extra = socket.create_connection((HOST, guarded_server.port))
        assert _closed_by_server(extra)  # refused at once, not held open
        extra.close()
    finally:
        for sock in held:
            sock.close()
    for _ in range(50):  # the held ones are gone once the server sees them closed
        try:
            assert _health(guarded_server.port) == 200
            break
        except (ConnectionError, http.client.HTTPException):
            continue
    else:
        pytest.fail("/health did not answer after the connections were released")
    assert "Traceback" not in guarded_server.log()

"""Memory per client (issue 14): an SSE client that never reads its stream, request
bodies in flight, and a refused ``GET /sse``, against real server processes.

Before, every answer of a non-reading SSE session was kept (40 requests with an 8 MiB
id: 2 GiB). Counted here: how many requests are accepted before the 429, not seconds.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.traffic_limits import MAX_OUTSTANDING_BYTES_PER_SESSION, MAX_OUTSTANDING_PER_SESSION
from tests.load.server_process import HOST, ServerProcess, serve_http

HANG_GUARD_S = 30.0
ID_BYTES = 1024 * 1024


@pytest.fixture(scope="module")
def sse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log: Path = tmp_path_factory.mktemp("memory") / "server.log"
    env = {"POLICY_PROVER_MAX_BODIES_IN_FLIGHT_MB": "8"}
    with serve_http(log, extra=["--transport", "sse"], env=env) as server:
        yield server


def _open_stream(server: ServerProcess, source: str = HOST) -> tuple[socket.socket, str]:
    """A GET /sse (from loopback ``source``) that reads its endpoint event and then never
    reads again."""
    sock = socket.create_connection(
        (HOST, server.port), timeout=HANG_GUARD_S, source_address=(source, 0)
    )
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(f"GET /sse HTTP/1.1\r\nHost: {HOST}:{server.port}\r\n\r\n".encode())
    seen = b""
    while b"session_id=" not in seen or b"\r\n\r\n" not in seen.split(b"session_id=")[1]:
        seen += sock.recv(4096)
    endpoint = seen.split(b"data: ", 1)[1].split(b"\r\n", 1)[0].decode()
    return sock, endpoint


def _post(server: ServerProcess, endpoint: str, message: dict[str, object]) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, server.port, timeout=HANG_GUARD_S)
    try:
        body = json.dumps(message).encode()
        connection.request(
            "POST", endpoint, body=body, headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _handshake(server: ServerProcess, endpoint: str) -> None:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"},
    }
    assert (
        _post(
            server, endpoint, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        )[0]
        == 202
    )
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert _post(server, endpoint, notification)[0] == 202


def test_a_session_that_never_reads_its_stream_is_refused_more_requests(
    sse_server: ServerProcess,
) -> None:
    sock, endpoint = _open_stream(sse_server)
    try:
        _handshake(sse_server, endpoint)
        accepted = 0
        refusal: tuple[int, bytes] | None = None
        big_id = "x" * ID_BYTES
        limit = MAX_OUTSTANDING_BYTES_PER_SESSION // ID_BYTES
        for index in range(MAX_OUTSTANDING_PER_SESSION + 10):
            message = {"jsonrpc": "2.0", "id": f"{big_id}{index}", "method": "tools/list"}
            status, body = _post(sse_server, endpoint, message)
            if status != 202:
                refusal = (status, body)
                break
            accepted += 1
        assert refusal is not None, "a non-reading session was never refused"
        status, body = refusal
        assert status == 429
        document = json.loads(body)
        assert document["error"] == "too_many_unread_bytes"
        assert "read the event stream" in document["detail"]
        # Answers the kernel's socket buffers took count as read; the rest are bounded.
        assert limit <= accepted <= limit + 16
        connection = http.client.HTTPConnection(HOST, sse_server.port, timeout=HANG_GUARD_S)
        connection.request("GET", "/health")
        assert connection.getresponse().status == 200
        connection.close()
    finally:
        sock.close()
    assert "Traceback" not in sse_server.log()


def test_small_unread_answers_are_bounded_by_count(sse_server: ServerProcess) -> None:
    sock, endpoint = _open_stream(sse_server)
    try:
        _handshake(sse_server, endpoint)
        statuses = []
        for index in range(4 * MAX_OUTSTANDING_PER_SESSION):
            # Each answer echoes a 64 KiB id, so the socket buffers fill after a few.
            message = {"jsonrpc": "2.0", "id": f"{'y' * 65536}{index}", "method": "tools/list"}
            status, body = _post(sse_server, endpoint, message)
            statuses.append(status)
            if status != 202:
                assert status == 429
                assert json.loads(body)["error"] == "too_many_unread_responses"
                break
        assert statuses[-1] == 429
        assert MAX_OUTSTANDING_PER_SESSION <= statuses.count(202) < 4 * MAX_OUTSTANDING_PER_SESSION
    finally:
        sock.close()


def test_bodies_in_flight_are_bounded_in_total(sse_server: ServerProcess) -> None:
    # The server was started with 8 MiB of bodies in flight: a declared 9 MiB body is
    # refused before it is read, with the limit named.
    sock = socket.create_connection((HOST, sse_server.port), timeout=HANG_GUARD_S)
    try:
        sock.sendall(
            b"POST /messages/?session_id=00000000000000000000000000000000 HTTP/1.1\r\n"
            b"Host: %s:%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (HOST.encode(), sse_server.port, 9 * 1024 * 1024)
        )
        answer = b""
        while not answer.endswith(b"}") and (chunk := sock.recv(65536)):
            answer += chunk
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 503")
    assert b"request bodies in flight" in answer and b"the limit is 8388608" in answer


def test_a_refused_sse_stream_logs_no_traceback(sse_server: ServerProcess) -> None:
    connection = http.client.HTTPConnection(HOST, sse_server.port, timeout=HANG_GUARD_S)
    connection.request("GET", "/sse", headers={"Host": "evil.example:80"})
    assert connection.getresponse().status == 421
    connection.close()
    connection = http.client.HTTPConnection(HOST, sse_server.port, timeout=HANG_GUARD_S)
    connection.request("GET", "/health")
    assert connection.getresponse().status == 200
    connection.close()
    log = sse_server.log()
    assert "Traceback" not in log
    assert "refused an SSE stream" in log


def test_session_ids_are_not_logged(sse_server: ServerProcess) -> None:
    import anyio
    from mcp import Client
    from mcp.client.sse import sse_client

    ids: list[str] = []

    async def session() -> None:
        url = f"{sse_server.base}/sse"
        async with Client(sse_client(url, on_session_created=ids.append)) as client:
            await client.list_tools()

    anyio.run(session)
    sock, endpoint = _open_stream(sse_server)
    sock.close()
    unknown = endpoint.replace(endpoint[-6:], "abcdef")  # a session that does not exist
    assert _post(sse_server, unknown, {"jsonrpc": "2.0", "id": 1, "method": "ping"})[0] == 404
    log = sse_server.log()
    assert ids and "POST /messages/?session_id=<session>" in log
    for session_id in [*ids, endpoint.rsplit("=", 1)[1], unknown.rsplit("=", 1)[1]]:
        assert session_id not in log

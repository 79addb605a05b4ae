"""A real streamable-HTTP server refuses malformed and oversized requests, then still works.

Raw HTTP over loopback (``http.client``, no MCP client): bodies that are not JSON-RPC,
wrong content types, wrong ``Accept`` headers, oversized bodies with and without a
``Content-Length``, unsupported methods. Each gets a 4xx answer, never a 5xx or a dropped
connection, and afterwards ``/health`` and a valid ``tools/call`` are answered.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest

from tests.load.server_process import HOST, ServerProcess, serve_http

MIB = 1024 * 1024
JSON = "application/json"
ACCEPT = "application/json, text/event-stream"
HEADERS = {"Content-Type": JSON, "Accept": ACCEPT}
POLICY = "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n"


def _call_body(request_id: int, candidate: str, boundary: str) -> bytes:
    arguments = {"candidate": candidate, "boundary": boundary, "timeout_ms": 5000}
    request = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "check_boundary", "arguments": arguments},
    }
    return json.dumps(request).encode()


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "hostile-test", "version": "1"},
        },
    }
).encode()
OVERSIZED = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (11 * MIB) + b'"}'


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log = tmp_path_factory.mktemp("hostile-http") / "server.log"
    with serve_http(log, extra=["--log-level", "warning"]) as running:
        yield running


def _request(
    running: ServerProcess,
    method: str,
    body: bytes | None,
    headers: dict[str, str],
    path: str = "/mcp",
    chunked: bool = False,
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, running.port, timeout=60)
    try:
        if chunked:
            connection.putrequest(method, path)
            for name, value in headers.items():
                connection.putheader(name, value)
            connection.putheader("Transfer-Encoding", "chunked")
            connection.endheaders()
            data = body or b""
            for start in range(0, len(data), MIB):
                chunk = data[start : start + MIB]
                connection.send(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            connection.send(b"0\r\n\r\n")
        else:
            connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


MALFORMED = {
    "garbage": b"garbage",
    "truncated": INITIALIZE[:30],
    "empty": b"",
    "list": b"[]",
    "null": b"null",
    "number": b"123",
    "invalid-utf8": b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}',
    "lone-surrogate-escape": _call_body(1, "version: 1\n# \\ud800", POLICY).replace(
        b"\\\\ud800", b"\\ud800"
    ),
    "wrong-jsonrpc-version": b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}',
    "no-method": b'{"jsonrpc": "2.0", "id": 1}',
    "deep-nesting": b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": '
    + b"[" * 5000
    + b"]" * 5000
    + b"}",
}


@pytest.mark.parametrize("body", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_body_is_a_400_with_a_json_rpc_error(
    http_server: ServerProcess, body: bytes
) -> None:
    status, answer = _request(http_server, "POST", body, HEADERS)
    assert status == 400
    assert "error" in json.loads(answer)


def test_a_request_with_an_object_id_is_taken_as_a_notification_and_not_answered(
    http_server: ServerProcess,
) -> None:
    body = b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}'
    status, answer = _request(http_server, "POST", body, HEADERS)
    assert status == 202
    assert answer == b""


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "", "application/jso"]
)
def test_a_wrong_content_type_is_refused(http_server: ServerProcess, content_type: str) -> None:
    headers = {"Accept": ACCEPT, **({"Content-Type": content_type} if content_type else {})}
    status, _ = _request(http_server, "POST", INITIALIZE, headers)
    assert 400 <= status < 500


@pytest.mark.parametrize("accept", ["text/html", JSON, "text/event-stream", "", "*/x"])
def test_a_wrong_accept_header_is_406(http_server: ServerProcess, accept: str) -> None:
    headers = {"Content-Type": JSON, **({"Accept": accept} if accept else {})}
    status, _ = _request(http_server, "POST", INITIALIZE, headers)
    assert status == 406


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_oversized_body_is_413(http_server: ServerProcess, chunked: bool) -> None:
    status, _ = _request(http_server, "POST", OVERSIZED, HEADERS, chunked=chunked)
    assert status == 413


def test_two_oversized_policies_in_one_request_are_413(http_server: ServerProcess) -> None:
    huge = "version: 1\n" + "#" * (6 * MIB)
    status, _ = _request(http_server, "POST", _call_body(1, huge, huge), HEADERS)
    assert status == 413


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_an_unsupported_http_method_is_405(http_server: ServerProcess, method: str) -> None:
    status, _ = _request(http_server, method, INITIALIZE, HEADERS)
    assert status == 405


def test_an_unknown_json_rpc_method_is_a_method_not_found_error(
    http_server: ServerProcess,
) -> None:
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "no/such/method"}'
    status, answer = _request(http_server, "POST", body, HEADERS)
    assert status == 200
    assert b'"code":-32601' in answer


def test_after_all_that_health_and_a_valid_call_still_work(http_server: ServerProcess) -> None:
    for body in MALFORMED.values():
        _request(http_server, "POST", body, HEADERS)
    _request(http_server, "POST", OVERSIZED, HEADERS, chunked=True)
    status, health = _request(http_server, "GET", None, {}, path="/health")
    assert status == 200 and json.loads(health)["status"] == "ok"
    status, answer = _request(http_server, "POST", _call_body(9, POLICY, POLICY), HEADERS)
    assert status == 200
    data = answer.decode().split("data: ", 1)[1]
    result = json.loads(data)["result"]
    assert result["structuredContent"]["result"] == "within_boundary"
    assert http_server.process.poll() is None
    assert "Traceback" not in http_server.log()

"""``policy-prover serve`` as a real process: stdio, streamable HTTP and SSE, and HTTP safety.

One server process per transport serves the whole module. The HTTP servers run with a
bearer token, so every client here sends it; the security tests also try without it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

import server
from server.cli import main
from server.http_security import MAX_REQUEST_BODY_BYTES, TOKEN_ENV

REPO_ROOT = str(Path(server.__file__).resolve().parent.parent)
TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
WITHIN = {
    "candidate": "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n",
    "boundary": "version: 1\nfilesystem_policy:\n  read_only: [/usr, /etc]\n",
}
EXCEEDS = {
    "candidate": "version: 1\nfilesystem_policy:\n  read_write: [/tmp]\n",
    "boundary": "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class HttpServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def start_http(transport: str, directory: Path) -> HttpServer:
    port = free_port()
    log = directory / f"{transport}.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "server", "--transport", transport, "--port", str(port)],
            env={**os.environ, "PYTHONPATH": REPO_ROOT, TOKEN_ENV: TOKEN},
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {log.read_text()}")
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return HttpServer(process, port, log)
        except httpx2.TransportError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"server did not answer /health: {log.read_text()}")


def stop(server_: HttpServer) -> bytes:
    server_.process.terminate()
    out, _ = server_.process.communicate(timeout=30)
    return out


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    running = start_http("streamable-http", tmp_path_factory.mktemp("http"))
    yield running
    assert stop(running) == b"", "the HTTP server wrote to stdout"


@pytest.fixture(scope="module")
def sse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    running = start_http("sse", tmp_path_factory.mktemp("sse"))
    yield running
    assert stop(running) == b"", "the SSE server wrote to stdout"


async def _exercise(client: Client) -> dict[str, Any]:
    tools = (await client.list_tools()).tools
    assert "check_boundary" in [t.name for t in tools]
    assert tools[0].output_schema is not None
    within = await client.call_tool("check_boundary", WITHIN)
    exceeds = await client.call_tool("check_boundary", EXCEEDS)
    assert within.structured_content is not None and exceeds.structured_content is not None
    return {
        "within": within.structured_content["result"],
        "exceeds": exceeds.structured_content["result"],
        "counterexample": exceeds.structured_content["counterexample"],
    }


EXPECTED = {
    "within": "within_boundary",
    "exceeds": "exceeds_boundary",
    "counterexample": {"domain": "filesystem", "access": "write", "path": "/tmp"},
}


# -- stdio --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_server_answers_a_real_client(mode: str, anyio_backend: str) -> None:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "server"], env={"PYTHONPATH": REPO_ROOT}
    )
    with anyio.fail_after(60):
        async with Client(parameters, mode=mode) as client:
            assert await _exercise(client) == EXPECTED


def test_stdio_stdout_carries_only_protocol_messages() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "server"],
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, _ = process.communicate(json.dumps(INITIALIZE).encode() + b"\n", timeout=60)
    lines = out.splitlines()
    assert process.returncode == 0
    assert lines, "no answer to initialize"
    messages = [json.loads(line) for line in lines]
    assert messages[0]["id"] == 1
    assert messages[0]["result"]["serverInfo"]["name"] == "policy-prover"


# -- streamable HTTP ----------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_streamable_http_server_answers_a_real_client(
    http_server: HttpServer, mode: str, anyio_backend: str
) -> None:
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(headers=AUTH, timeout=httpx2.Timeout(30, read=300)) as http:
            transport = streamable_http_client(f"{http_server.base}/mcp", http_client=http)
            async with Client(transport, mode=mode) as client:
                assert await _exercise(client) == EXPECTED


def test_streamable_http_is_stateless(http_server: HttpServer) -> None:
    response = httpx2.post(
        f"{http_server.base}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **AUTH}, timeout=30
    )
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers


def test_health_answers_without_a_token(http_server: HttpServer) -> None:
    response = httpx2.get(f"{http_server.base}/health", timeout=10)
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-token"),
        pytest.param({"Authorization": "Bearer wrong"}, id="wrong-token"),
        pytest.param({"Authorization": TOKEN}, id="no-bearer-scheme"),
        pytest.param({"Authorization": f"Bearer {TOKEN}x"}, id="token-with-suffix"),
    ],
)
def test_a_request_without_the_right_token_is_refused(
    http_server: HttpServer, headers: dict[str, str]
) -> None:
    response = httpx2.post(
        f"{http_server.base}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=30
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_a_foreign_host_header_is_refused(http_server: HttpServer) -> None:
    response = httpx2.post(
        f"{http_server.base}/mcp",
        json=INITIALIZE,
        headers={**MCP_HEADERS, **AUTH, "Host": f"attacker.example:{http_server.port}"},
        timeout=30,
    )
    assert response.status_code == 421


def test_a_foreign_origin_is_refused(http_server: HttpServer) -> None:
    response = httpx2.post(
        f"{http_server.base}/mcp",
        json=INITIALIZE,
        headers={**MCP_HEADERS, **AUTH, "Origin": "https://attacker.example"},
        timeout=30,
    )
    assert response.status_code == 403


def test_an_oversized_request_is_refused_with_413(http_server: HttpServer) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * MAX_REQUEST_BODY_BYTES
    response = httpx2.post(
        f"{http_server.base}/mcp", content=body, headers={**MCP_HEADERS, **AUTH}, timeout=60
    )
    assert response.status_code == 413


def test_two_policies_at_the_input_limit_fit_in_one_request(http_server: HttpServer) -> None:
    policy = "version: 1\n" + "#" * (4 * 1024 * 1024 - 12) + "\n"
    request = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "check_boundary",
            "arguments": {"candidate": policy, "boundary": policy},
        },
    }
    response = httpx2.post(
        f"{http_server.base}/mcp", json=request, headers={**MCP_HEADERS, **AUTH}, timeout=60
    )
    assert response.status_code == 200
    assert "result: within_boundary" in response.text  # identical policies, one long comment


# -- SSE ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_sse_server_answers_a_real_client(sse_server: HttpServer, anyio_backend: str) -> None:
    with anyio.fail_after(60):
        async with Client(sse_client(f"{sse_server.base}/sse", headers=AUTH)) as client:
            assert await _exercise(client) == EXPECTED


def test_sse_refuses_a_stream_without_the_token(sse_server: HttpServer) -> None:
    with httpx2.stream("GET", f"{sse_server.base}/sse", timeout=10) as response:
        assert response.status_code == 401


def test_sse_refuses_a_foreign_host_header(sse_server: HttpServer) -> None:
    with httpx2.stream(
        "GET", f"{sse_server.base}/sse", headers={**AUTH, "Host": "attacker.example"}, timeout=10
    ) as response:
        assert response.status_code == 421


# -- refusing unsafe configurations ---------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_a_non_loopback_bind_without_a_token_is_refused(
    host: str,
    transport: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    code = main(["serve", "--transport", transport, "--host", host])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert TOKEN_ENV in captured.err and host in captured.err


def test_a_token_list_without_a_token_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(TOKEN_ENV, " , ,")
    code = main(["serve", "--transport", "streamable-http", "--host", "0.0.0.0"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert TOKEN_ENV in captured.err and "lists no token" in captured.err


@pytest.mark.parametrize("port", ["0", "-1", "65536", "http"])
def test_an_invalid_port_is_a_usage_error(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--transport", "streamable-http", "--port", port])
    assert code == 2
    assert capsys.readouterr().out == ""

"""Fair admission over a real SSE server (issue 14): one session flooding slow checks
cannot keep another session's trivial check waiting.

Before, 40 slow checks of one client took all 32 admissions, and every other client's
trivial check waited for its whole deadline and answered ``inconclusive``. Nothing here
is timed: the trivial check has a 20 s deadline and must be *decided* while every flood
call (30 s deadlines) is still unanswered.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.sse import sse_client

from tests.load.server_process import ServerProcess, serve_http
from tests.load.sources import http_client_from
from tests.load.workload import TRIVIAL, slow_pair

pytestmark = pytest.mark.anyio
FLOOD = 40


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def sse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log: Path = tmp_path_factory.mktemp("fair") / "server.log"
    with serve_http(log, extra=["--transport", "sse", "--cache-size", "0"]) as server:
        yield server


def _client(server: ServerProcess, source: str = "127.0.0.1") -> Client:
    """An SSE client whose connections leave from loopback ``source``: without tokens
    a client is its address, so two sources are two clients."""
    url = f"{server.base}/sse"
    return Client(
        sse_client(url, sse_read_timeout=120, httpx_client_factory=http_client_from(source))
    )


async def test_a_flooding_session_leaves_room_for_another_sessions_check(
    sse_server: ServerProcess,
) -> None:
    candidate, boundary = slow_pair()
    flood_answered: list[str] = []

    async def slow(client: Client) -> None:
        arguments = {"candidate": candidate, "boundary": boundary, "timeout_ms": 30_000}
        result = await client.call_tool("check_boundary", arguments)
        flood_answered.append(str((result.structured_content or {}).get("result")))

    with anyio.fail_after(60):
        async with _client(sse_server) as flooder, _client(sse_server, "127.0.0.2") as other:
            async with anyio.create_task_group() as tg:
                for _ in range(FLOOD):
                    tg.start_soon(slow, flooder)
                await flooder.list_tools()  # the flood's requests are in before this answer
                arguments = {"candidate": TRIVIAL[0], "boundary": TRIVIAL[1], "timeout_ms": 20_000}
                result = await other.call_tool("check_boundary", arguments)
                answered_during_flood = list(flood_answered)
                tg.cancel_scope.cancel()
    assert (result.structured_content or {}).get("result") == "within_boundary"
    assert answered_during_flood == []
    assert "Traceback" not in sse_server.log()


@pytest.fixture(scope="module", params=["tokens", "addresses"])
def http_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, ServerProcess]]:
    log: Path = tmp_path_factory.mktemp("fair-http") / "server.log"
    env = {"POLICY_PROVER_TOKEN": "flood-secret, other-secret"} if request.param == "tokens" else {}
    with serve_http(log, extra=["--cache-size", "0"], env=env) as server:
        yield request.param, server


async def test_a_flood_over_many_connections_is_one_client(
    http_server: tuple[str, ServerProcess],
) -> None:
    """Over streamable HTTP a client's concurrent calls use many connections. With one
    token per client the token names the client; without tokens its address does (the
    others connect from 127.0.0.2). Per connection, the flood's 40 connections were 40
    clients that held every admission: another host's trivial call waited up to 5.55 s
    (issue 24)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    naming, server = http_server
    candidate, boundary = slow_pair()
    flood_answered: list[str] = []
    url = server.url

    def client(http: httpx2.AsyncClient) -> Client:
        return Client(streamable_http_client(url, http_client=http))

    async def slow(flooder: Client) -> None:
        arguments = {"candidate": candidate, "boundary": boundary, "timeout_ms": 30_000}
        result = await flooder.call_tool("check_boundary", arguments)
        flood_answered.append(str((result.structured_content or {}).get("result")))

    def http_client(token: str, source: str) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if naming == "tokens" else None
        return http_client_from(source)(headers, httpx2.Timeout(60, read=120))

    flood_http = http_client("flood-secret", "127.0.0.1")
    other_http = http_client("other-secret", "127.0.0.1" if naming == "tokens" else "127.0.0.2")
    with anyio.fail_after(60):
        async with flood_http, other_http, client(flood_http) as flooder:
            async with client(other_http) as other, anyio.create_task_group() as tg:
                for _ in range(FLOOD):
                    tg.start_soon(slow, flooder)
                await anyio.sleep(2.0)  # let the flood's requests in (weaker test if not)
                arguments = {"candidate": TRIVIAL[0], "boundary": TRIVIAL[1], "timeout_ms": 20_000}
                result = await other.call_tool("check_boundary", arguments)
                answered_during_flood = list(flood_answered)
                tg.cancel_scope.cancel()
    assert (result.structured_content or {}).get("result") == "within_boundary"
    assert answered_during_flood == []
    assert "Traceback" not in server.log()

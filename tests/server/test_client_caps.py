"""server.client_caps in-process: requests and streams counted per client (issue 24)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from prover.run.admission import current_client
from server.client_caps import CapLimits, ClientCaps
from server.client_key import ClientKeyMiddleware

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class HeldApp:
    """Answers 200 once ``release`` is set; counts the requests that reached it."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.reached = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.reached += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def _request(app: Any, method: str, path: str, address: str, out: list[Any]) -> None:
    scope = {"type": "http", "method": method, "path": path, "client": (address, 40000)}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    named = current_client.set(None)  # as in a request's own task (uvicorn's)
    try:
        await app(scope, receive, send)
    finally:
        current_client.reset(named)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    out.append((sent[0]["status"], json.loads(body) if body else None))


async def test_streams_and_requests_are_capped_per_address() -> None:
    held = HeldApp()
    limits = CapLimits(streams_per_client=2, streams_total=3, requests_per_client=4)
    app = ClientKeyMiddleware(ClientCaps(held, limits, frozenset({"/mcp"})))
    refused: list[Any] = []
    answered: list[Any] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for _ in range(2):  # two streams from one address: its cap
                tg.start_soon(_request, app, "GET", "/mcp", "10.0.0.1", answered)
            await anyio.wait_all_tasks_blocked()
            await _request(app, "GET", "/mcp", "10.0.0.1", refused)
            for _ in range(2):  # two calls more: four requests in progress
                tg.start_soon(_request, app, "POST", "/mcp", "10.0.0.1", answered)
            await anyio.wait_all_tasks_blocked()
            await _request(app, "POST", "/mcp", "10.0.0.1", refused)
            tg.start_soon(_request, app, "GET", "/health", "10.0.0.1", answered)  # not counted
            tg.start_soon(_request, app, "GET", "/mcp", "10.0.0.2", answered)  # another client
            await anyio.wait_all_tasks_blocked()
            await _request(app, "GET", "/mcp", "10.0.0.3", refused)  # all streams: 3
            assert held.reached == 6  # the refused ones never reached the application
            held.release.set()
    assert [status for status, _ in refused] == [429, 429, 429]
    assert [body["error"] for _, body in refused] == [
        "too_many_streams",
        "too_many_requests_in_progress",
        "too_many_streams",
    ]
    assert len(answered) == 6 and {status for status, _ in answered} == {200}
    await _request(app, "GET", "/mcp", "10.0.0.1", answered)  # all freed again
    assert answered[-1][0] == 200


def test_the_defaults_follow_the_connection_cap() -> None:
    limits = CapLimits.for_connections(512, {})
    assert (limits.streams_per_client, limits.streams_total) == (16, 128)
    assert (limits.requests_per_client, limits.requests_total) == (256, 384)
    assert CapLimits.for_connections(8, {}).streams_per_client == 1
    with pytest.raises(ValueError, match="POLICY_PROVER_MAX_STREAMS_PER_CLIENT"):
        CapLimits.for_connections(512, {"POLICY_PROVER_MAX_STREAMS_PER_CLIENT": "0"})


async def test_requests_over_all_clients_are_capped() -> None:
    held = HeldApp()
    limits = CapLimits(
        streams_per_client=1, streams_total=1, requests_per_client=2, requests_total=3
    )
    app = ClientKeyMiddleware(ClientCaps(held, limits, frozenset({"/mcp"})))
    answered: list[Any] = []
    refused: list[Any] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
                tg.start_soon(_request, app, "POST", "/mcp", address, answered)
            await anyio.wait_all_tasks_blocked()
            await _request(app, "POST", "/mcp", "10.0.0.4", refused)
            held.release.set()
    assert [(status, body["error"]) for status, body in refused] == [(429, "server_busy")]
    assert len(answered) == 3


def test_ipv6_clients_are_their_64_network() -> None:
    from server.client_key import address_key

    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("192.0.2.7") == "192.0.2.7"

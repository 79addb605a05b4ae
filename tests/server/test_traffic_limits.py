"""The accounting of server.traffic_limits in-process: what a session owes is counted
from its requests and paid by the answers written to its stream, without drift."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from prover.run.admission import current_client
from server.traffic_limits import (
    ANSWER_BASE_BYTES,
    MAX_OUTSTANDING_BYTES_PER_CLIENT,
    MAX_OUTSTANDING_BYTES_PER_SESSION,
    MAX_OUTSTANDING_PER_SESSION,
    TrafficLimits,
)

pytestmark = pytest.mark.anyio
SESSION = "ab" * 16


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeSdk:
    """Answers a stream with its endpoint event, then the events pushed to ``events``;
    answers a message POST with ``status`` after reading its body."""

    def __init__(self, sessions: tuple[str, ...] = (SESSION,)) -> None:
        self.status = 202
        self.sessions = list(sessions)
        self.send_events, self.events = anyio.create_memory_object_stream[bytes](100)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["method"] == "GET":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            session = self.sessions.pop(0)
            body = f"event: endpoint\r\ndata: /messages/?session_id={session}\r\n\r\n"
            await send({"type": "http.response.body", "body": body.encode(), "more_body": True})
            async for event in self.events:
                await send({"type": "http.response.body", "body": event, "more_body": True})
            return
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": self.status, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _scope(method: str, path: str, query: bytes = b"", length: int | None = None) -> dict:
    headers = [] if length is None else [(b"content-length", str(length).encode())]
    return {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": headers,
    }


async def _post(limits: TrafficLimits, body: bytes, session: str = SESSION) -> int:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = _scope("POST", "/messages/", f"session_id={session}".encode(), len(body))
    await limits(scope, receive, send)
    return int(sent[0]["status"])


async def test_requests_are_owed_until_answered_and_refused_past_the_limit() -> None:
    sdk = FakeSdk()
    limits = TrafficLimits(sdk, sse_path="/sse", message_path="/messages/")

    async def stream_receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        return {}

    async def stream_send(message: dict[str, Any]) -> None:
        pass

    request = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
    notification = (
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}'
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(limits, _scope("GET", "/sse"), stream_receive, stream_send)
        await anyio.wait_all_tasks_blocked()
        assert SESSION in limits.sessions
        assert await _post(limits, notification) == 202
        assert limits.outstanding == 0  # a notification gets no answer: owes nothing
        sdk.status = 400
        assert await _post(limits, request) == 400
        assert limits.outstanding == 0  # refused by the SDK: no answer will come
        sdk.status = 202
        for _ in range(MAX_OUTSTANDING_PER_SESSION):
            assert await _post(limits, request) == 202
        assert limits.outstanding == MAX_OUTSTANDING_PER_SESSION
        owed = MAX_OUTSTANDING_PER_SESSION * (len(request) + ANSWER_BASE_BYTES)
        assert limits.outstanding_bytes == owed
        assert limits.client_bytes == {None: owed}
        assert await _post(limits, request) == 429
        await sdk.send_events.send(b"event: message\r\ndata: {}\r\n\r\n" * 3)
        await anyio.wait_all_tasks_blocked()
        assert limits.outstanding == MAX_OUTSTANDING_PER_SESSION  # maybe still buffered
        await sdk.send_events.send(b": ping\r\n\r\n")  # the next send: they are out
        await anyio.wait_all_tasks_blocked()
        assert limits.outstanding == MAX_OUTSTANDING_PER_SESSION - 3
        assert await _post(limits, request) == 202
        tg.cancel_scope.cancel()
    sdk.send_events.close()
    sdk.events.close()
    # The stream ended: the session and what it owed leave the totals.
    assert limits.sessions == {}
    assert (limits.outstanding, limits.outstanding_bytes, limits.bodies_in_flight) == (0, 0, 0)
    assert limits.client_bytes == {}


async def test_bodies_in_flight_are_reserved_and_released() -> None:
    gate = anyio.Event()
    seen: list[int] = []

    async def slow_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        seen.append(limits.bodies_in_flight)
        await gate.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    limits = TrafficLimits(slow_app, max_bodies_in_flight=100)
    statuses: list[int] = []

    async def post(size: int) -> None:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"x" * size, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(int(message["status"]))

        await limits(_scope("POST", "/mcp", length=size), receive, send)

    async with anyio.create_task_group() as tg:
        tg.start_soon(post, 60)
        await anyio.wait_all_tasks_blocked()
        await post(50)  # 60 + 50 > 100: refused at once, before its body is read
        assert statuses == [503] and seen == [60]
        gate.set()
    assert statuses == [503, 200]
    assert limits.bodies_in_flight == 0


async def test_a_clients_sessions_together_owe_at_most_its_bytes() -> None:
    """24 non-reading sessions posting 8 MiB ids peaked at 732 MiB (issue 24): a client's
    sessions now share one bound, below the sum of their own."""
    sessions = tuple(f"{index:032x}" for index in range(1, 5))
    sdk = FakeSdk(sessions)
    limits = TrafficLimits(sdk, sse_path="/sse", message_path="/messages/")
    big = b'{"jsonrpc": "2.0", "id": "%s", "method": "tools/list"}' % (b"x" * (6 * 1024 * 1024))

    async def stream_receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        return {}

    async def stream_send(message: dict[str, Any]) -> None:
        pass

    async def stream() -> None:
        current_client.set(("address", "10.0.0.1"))
        await limits(_scope("GET", "/sse"), stream_receive, stream_send)

    statuses: list[int] = []
    async with anyio.create_task_group() as tg:
        for _ in sessions:
            tg.start_soon(stream)
        await anyio.wait_all_tasks_blocked()
        for session in sessions:
            while (status := await _post(limits, big, session)) == 202:
                statuses.append(status)
            statuses.append(status)
        owed = limits.client_bytes[("address", "10.0.0.1")]
        tg.cancel_scope.cancel()
    sdk.send_events.close()
    sdk.events.close()
    cap = MAX_OUTSTANDING_BYTES_PER_CLIENT
    assert cap <= owed < cap + len(big) * 2
    assert MAX_OUTSTANDING_BYTES_PER_CLIENT < len(sessions) * MAX_OUTSTANDING_BYTES_PER_SESSION
    assert statuses.count(202) == 6  # 3 per session in the first two, then the client's cap
    assert limits.client_bytes == {}

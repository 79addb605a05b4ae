"""Per-client caps on requests in progress and on event streams (issue 24).

One token holder kept 512 ``GET /mcp`` streams open: every connection the server allows
was busy with one, and every other client and ``/health`` got a connection reset. Each
HTTP request but ``/health`` now counts against its client (:data:`current_client`: the
token when there is one per client, else the peer's address; see
:mod:`server.client_key`) from the start of its handling to its end:

- at most :attr:`CapLimits.streams_per_client` long-lived event streams (``GET /mcp``,
  ``GET /sse``) per client, and :attr:`CapLimits.streams_total` over all clients;
- at most :attr:`CapLimits.requests_per_client` requests in progress per client, of
  any kind (streams included), and :attr:`CapLimits.requests_total` over all clients.

Past a cap the request is answered **429** with a JSON error naming the cap, before its
body is read, and its connection stays open for keep-alive: idle, so the connection
guard (:mod:`server.connection_guard`) may reclaim it for another client. The defaults
follow the connection cap, so that no client can make every connection busy.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from prover.run.admission import current_client
from server.http_security import PUBLIC_PATHS, ASGIApp, Receive, Scope, Send, _send_json

#: Event streams one client may hold open (an MCP client needs one per session).
DEFAULT_STREAMS_PER_CLIENT = 16
STREAMS_PER_CLIENT_ENV = "POLICY_PROVER_MAX_STREAMS_PER_CLIENT"
STREAMS_TOTAL_ENV = "POLICY_PROVER_MAX_STREAMS"
REQUESTS_PER_CLIENT_ENV = "POLICY_PROVER_MAX_REQUESTS_PER_CLIENT"


@dataclass(frozen=True)
class CapLimits:
    streams_per_client: int
    streams_total: int
    requests_per_client: int
    #: Requests in progress over all clients: a quarter of the connections stays idle or
    #: free even when many addresses flood, so ``/health`` and newcomers get one.
    requests_total: int = 2**31

    @classmethod
    def for_connections(
        cls, max_connections: int, environ: Mapping[str, str] = os.environ
    ) -> CapLimits:
        """Defaults from the connection cap: a client may keep half of the connections
        busy and a sixteenth (at most 16) streaming; all clients three quarters busy and
        a quarter streaming.
        ``POLICY_PROVER_MAX_STREAMS_PER_CLIENT``, ``..._REQUESTS_PER_CLIENT`` and
        ``POLICY_PROVER_MAX_STREAMS`` (all clients) override them (positive integers,
        else a ValueError naming the variable)."""
        requests = max(1, max_connections // 2)
        streams = max(1, min(DEFAULT_STREAMS_PER_CLIENT, max_connections // 16))
        requests = _positive(environ, REQUESTS_PER_CLIENT_ENV, requests)
        streams = _positive(environ, STREAMS_PER_CLIENT_ENV, streams)
        total = _positive(environ, STREAMS_TOTAL_ENV, max(streams, max_connections // 4))
        return cls(
            streams_per_client=streams,
            streams_total=total,
            requests_per_client=requests,
            requests_total=max(requests, max_connections * 3 // 4),
        )


def _positive(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


def is_stream(scope: Scope, stream_paths: frozenset[str]) -> bool:
    return scope.get("method") == "GET" and scope.get("path") in stream_paths


class ClientCaps:
    """The ASGI layer; runs inside the token and client-key middlewares."""

    def __init__(self, app: ASGIApp, limits: CapLimits, stream_paths: frozenset[str]) -> None:
        self.app = app
        self.limits = limits
        self.stream_paths = stream_paths
        self.requests: dict[Hashable | None, int] = {}
        self.streams: dict[Hashable | None, int] = {}
        self.streams_total = 0
        self.requests_total = 0
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        client = current_client.get()
        stream = is_stream(scope, self.stream_paths)
        problem = self._problem(client, stream)
        if problem is not None:
            self.refused += 1
            await _send_json(send, 429, {"error": problem[0], "detail": problem[1]})
            return
        self.requests[client] = self.requests.get(client, 0) + 1
        self.requests_total += 1
        if stream:
            self.streams[client] = self.streams.get(client, 0) + 1
            self.streams_total += 1
        try:
            await self.app(scope, receive, send)
        finally:
            _decrement(self.requests, client)
            self.requests_total -= 1
            if stream:
                _decrement(self.streams, client)
                self.streams_total -= 1

    def _problem(self, client: Hashable | None, stream: bool) -> tuple[str, str] | None:
        limits = self.limits
        if self.requests.get(client, 0) >= limits.requests_per_client:
            return (
                "too_many_requests_in_progress",
                f"this client has {self.requests[client]} requests in progress (the limit "
                f"is {limits.requests_per_client}); wait for answers before sending more",
            )
        if self.requests_total >= limits.requests_total:
            return (
                "server_busy",
                f"the server has {self.requests_total} requests in progress (the limit is "
                f"{limits.requests_total}); retry later",
            )
        if stream and self.streams.get(client, 0) >= limits.streams_per_client:
            return (
                "too_many_streams",
                f"this client holds {self.streams[client]} event streams open (the limit "
                f"is {limits.streams_per_client}); close one before opening another",
            )
        if stream and self.streams_total >= limits.streams_total:
            return (
                "too_many_streams",
                f"the server holds {self.streams_total} event streams open (the limit is "
                f"{limits.streams_total}); retry later",
            )
        return None


def _decrement(counts: dict[Hashable | None, int], client: Hashable | None) -> None:
    left = counts.get(client, 0) - 1
    if left > 0:
        counts[client] = left
    else:
        counts.pop(client, None)


__all__ = ["CapLimits", "ClientCaps"]

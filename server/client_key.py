"""Which client an HTTP request comes from, for fair admission (:mod:`prover.run.admission`).

With several bearer tokens (one per client), a client is a token, named by the token
middleware. Otherwise a client is a connection: the peer address and port. On
SSE the tool calls of a session run in the task of its ``GET /sse`` request, so a
session is one client; on streamable HTTP a connection carries one call at a time, so a
flood of concurrent calls needs as many connections (bounded by the connection cap).
Addresses are not grouped: loopback clients share one address, and so do clients
behind a proxy.
"""

from __future__ import annotations

import itertools

from prover.run.admission import current_client
from server.http_security import ASGIApp, Receive, Scope, Send

_unnamed = itertools.count()


class ClientKeyMiddleware:
    """Name the client of each HTTP request in :data:`current_client` for the tasks it
    starts (uvicorn runs each request in its own task, so the name stays with it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and current_client.get() is None:
            peer = scope.get("client")
            if peer:
                current_client.set(("connection", str(peer[0]), int(peer[1])))
            else:
                current_client.set(("request", next(_unnamed)))
        await self.app(scope, receive, send)

"""Which client an HTTP request comes from, for fair admission (:mod:`prover.admission`)
and the per-client caps (:mod:`server.client_caps`).

With several bearer tokens (one per client), a client is a token, named by the token
middleware. Otherwise a client is the peer's address: a flood of concurrent calls over
many connections from one host is one client (per connection, 40 connections held all
32 admissions; issue 24). Clients sharing an address share its share: every client of a
loopback server, every client behind one proxy. Give such clients a token each.
"""

from __future__ import annotations

import itertools

from prover.admission import current_client
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
                current_client.set(("address", str(peer[0])))
            else:
                current_client.set(("request", next(_unnamed)))
        await self.app(scope, receive, send)

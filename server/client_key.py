"""Which client an HTTP request comes from, for fair admission (:mod:`prover.run.admission`)
and the per-client caps (:mod:`server.client_caps`).

With several bearer tokens (one per client), a client is a token, named by the token
middleware. Otherwise a client is the peer's address: a flood of concurrent calls over
many connections from one host is one client (per connection, 40 connections held all
32 admissions; issue 24). Clients sharing an address share its share: every client of a
loopback server, every client behind one proxy. Give such clients a token each. An
IPv6 client is its /64 network (one host commonly holds a whole /64), an IPv4-mapped
address its IPv4 address.
"""

from __future__ import annotations

import ipaddress
import itertools

from prover.run.admission import current_client
from server.http_security import ASGIApp, Receive, Scope, Send

_unnamed = itertools.count()


def address_key(host: str) -> str:
    """The client an address belongs to: itself, or for IPv6 its /64 network."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host  # not an IP address (a Unix socket path, a test's name)
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class ClientKeyMiddleware:
    """Name the client of each HTTP request in :data:`current_client` for the tasks it
    starts (uvicorn runs each request in its own task, so the name stays with it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and current_client.get() is None:
            peer = scope.get("client")
            if peer:
                current_client.set(("address", address_key(str(peer[0]))))
            else:
                current_client.set(("request", next(_unnamed)))
        await self.app(scope, receive, send)

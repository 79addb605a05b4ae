"""What makes the HTTP transports safe to expose (without importing the MCP SDK).

- Loopback by default; a non-loopback bind needs a bearer token (``POLICY_PROVER_TOKEN``).
- DNS-rebinding protection: the SDK's Host/Origin check, with the allowed hosts derived
  from ``--host``/``--port`` plus any names given explicitly.
- The token, when set, is checked on every request except ``/health`` by a small ASGI
  middleware, in constant time, before any body is read.
- The request body limit leaves room for two policies at the 4 MiB input limit.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from prover.run.admission import current_client

TOKEN_ENV = "POLICY_PROVER_TOKEN"
ALLOWED_HOSTS_ENV = "POLICY_PROVER_ALLOWED_HOSTS"

#: Two policies of 4 MiB each, JSON-escaped inside one request, with room to spare. The
#: SDK's own default (4 MiB) would refuse a single policy at the input limit.
MAX_REQUEST_BODY_BYTES = 10 * 1024 * 1024

PUBLIC_PATHS = frozenset({"/health"})
#: Discovery documents (OAuth metadata and the like): this server publishes none.
WELL_KNOWN_PREFIX = "/.well-known/"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and any loopback IP address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _host_header_name(host: str) -> str:
    bare = host.strip("[]")
    try:
        if ipaddress.ip_address(bare).version == 6:
            return f"[{bare}]"
    except ValueError:
        pass
    return host


def allowed_hosts(host: str, port: int, extra: list[str]) -> list[str]:
    """The ``Host`` header values a request may carry.

    Loopback names when serving loopback (or every address); the bind address itself
    when it is a specific one; this machine's host name when binding every address; and
    any names given with ``--allowed-host`` / ``POLICY_PROVER_ALLOWED_HOSTS``, taken as
    written (``name:*`` allows any port).
    """
    names: list[str] = []
    if is_loopback(host) or is_wildcard(host):
        names.extend(_LOOPBACK_NAMES)
    if not is_loopback(host) and not is_wildcard(host):
        names.append(_host_header_name(host))
    if is_wildcard(host):
        names.append(socket.gethostname())
    hosts = [f"{name}:{port}" for name in dict.fromkeys(names)]
    if port == 80:
        hosts.extend(dict.fromkeys(names))  # a client may omit the default port
    for item in extra:
        if item and item not in hosts:
            hosts.append(item)
    return hosts


def allowed_origins(hosts: list[str]) -> list[str]:
    """Browser origins allowed to call: local tools on any port, and the allowed hosts."""
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    for host in hosts:
        for scheme in ("http", "https"):
            origin = f"{scheme}://{host}"
            if origin not in origins:
                origins.append(origin)
    return origins


def parse_host_list(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


class BearerTokenMiddleware:
    """Refuse every HTTP request without ``Authorization: Bearer <token>`` (401).

    ``/health`` stays open for probes; ``/.well-known/*`` is 404 (no OAuth here); any
    scope but HTTP and lifespan (WebSocket) is refused. The comparison is constant-time.

    ``token`` may list several tokens separated by commas, one per client: each is then
    a client of its own for fair admission (:data:`prover.run.admission.current_client`),
    whatever connections it uses.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        tokens = [item.strip() for item in token.split(",") if item.strip()]
        if not tokens:
            raise ValueError("the bearer token is empty")
        self._expected = [f"Bearer {item}".encode() for item in tokens]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan" or (kind == "http" and scope.get("path") in PUBLIC_PATHS):
            await self.app(scope, receive, send)
            return
        if kind != "http":
            # A WebSocket (or any other) connection is not served at all; refuse it
            # before the application sees it, whatever it carries.
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        if str(scope.get("path", "")).startswith(WELL_KNOWN_PREFIX):
            # No OAuth metadata here: a 401 would send clients such as Claude Code into
            # OAuth discovery and dynamic client registration, which cannot succeed.
            await _send_json(send, 404, {"error": "not_found"})
            return
        supplied = b""
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                supplied = bytes(value)
                break
        matched = None
        for index, expected in enumerate(self._expected):  # every one: constant time
            if hmac.compare_digest(supplied, expected):
                matched = index
        if matched is not None:
            if len(self._expected) > 1:
                current_client.set(("token", matched))
            await self.app(scope, receive, send)
            return
        await _send_json(
            send,
            401,
            {"error": "unauthorized", "detail": "a valid bearer token is required"},
            extra_headers=[(b"www-authenticate", b'Bearer realm="policy-prover"')],
        )


async def _send_json(
    send: Send,
    status: int,
    body: dict[str, Any],
    extra_headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        *(extra_headers or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})

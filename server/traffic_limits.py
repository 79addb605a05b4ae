"""Memory bounds per client: request bodies in flight, and SSE responses not yet read.

An SSE client posts requests and reads the answers from its event stream. One that
never reads made the server keep every answer (about 213 KB per ``tools/list``; 40
requests with an 8 MiB id reached 2 GiB). This ASGI layer counts, per SSE session, the
requests posted whose answers have not yet been written to its stream (*outstanding*),
and refuses a new message with **429** and a JSON error naming the limit when the
session has :data:`MAX_OUTSTANDING_PER_SESSION` of them or
:data:`MAX_OUTSTANDING_BYTES_PER_SESSION` of request bytes behind them (each answer
counts :data:`ANSWER_BASE_BYTES` more), or its client (address or token, over all its
sessions) :data:`MAX_OUTSTANDING_BYTES_PER_CLIENT`; over every session together, past
:data:`MAX_OUTSTANDING_TOTAL` messages or :data:`MAX_OUTSTANDING_BYTES_TOTAL` bytes,
with **503**. Reading the stream frees them.

Every request with a body (both transports) also counts against
:data:`max_bodies_in_flight` bytes from its start to its response, reserved from its
``Content-Length`` (a chunked body is counted as it arrives): past it, new requests get
**503** before their body is read (40 stalled 10 MB uploads held 472 MiB).

A ``GET /sse`` the SDK refused (a wrong ``Host`` or ``Origin``: it answers 421/403 and
then raises) is not a server error: no traceback is logged.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from prover.run.admission import current_client
from server.http_security import ASGIApp, Message, Receive, Scope, Send, _send_json

log = logging.getLogger(__name__)

MAX_OUTSTANDING_PER_SESSION = 64
#: Request bytes behind unread answers. An answer held for a session that does not read
#: costs about 2.3 times its request in memory (the id is echoed, and the answer exists
#: as objects, JSON and SSE text): with 32 MiB per session and 256 MiB in all, 24
#: sessions posting 8 MiB ids peaked at 732 MiB (issue 24). The bounds below, and a
#: client's (its address or token) over all its sessions, keep it near 300 MiB.
MAX_OUTSTANDING_BYTES_PER_SESSION = 16 * 1024 * 1024
MAX_OUTSTANDING_BYTES_PER_CLIENT = 32 * 1024 * 1024
MAX_OUTSTANDING_TOTAL = 1024
MAX_OUTSTANDING_BYTES_TOTAL = 64 * 1024 * 1024
#: What an answer counts besides its request's bytes: the largest answer that does not
#: grow with its request (``resources/read`` of the schema, about 22 KB) and its copies.
ANSWER_BASE_BYTES = 64 * 1024
DEFAULT_MAX_BODIES_IN_FLIGHT = 192 * 1024 * 1024
MAX_BODIES_IN_FLIGHT_ENV = "POLICY_PROVER_MAX_BODIES_IN_FLIGHT_MB"

_SESSION_ID = re.compile(rb"session_id=([0-9a-f]{32})")
_MESSAGE_EVENT = b"event: message"
_REQUEST_ID = b'"id"'


@dataclass
class _Session:
    client: Hashable | None = None
    outstanding: int = 0
    outstanding_bytes: int = 0
    alive: bool = True  # False once its stream ended and its counts left the totals


class TrafficLimits:
    """The ASGI layer; ``sse_path``/``message_path`` are the SSE routes (None: none)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        sse_path: str | None = None,
        message_path: str | None = None,
        max_bodies_in_flight: int = DEFAULT_MAX_BODIES_IN_FLIGHT,
    ) -> None:
        self.app = app
        self.sse_path = sse_path
        self.message_path = message_path
        self.max_bodies_in_flight = max_bodies_in_flight
        self.bodies_in_flight = 0
        self.sessions: dict[str, _Session] = {}
        self.outstanding = 0
        self.outstanding_bytes = 0
        self.client_bytes: dict[Hashable | None, int] = {}
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        method = scope.get("method", "")
        if self.sse_path is not None and path == self.sse_path and method == "GET":
            await self._stream(scope, receive, send)
        elif self.message_path is not None and path.startswith(self.message_path):
            await self._message(scope, receive, send)
        elif method in ("POST", "PUT", "PATCH"):
            await self._with_body(scope, receive, send, None)
        else:
            await self.app(scope, receive, send)

    # -- the SSE stream --------------------------------------------------------------
    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id: str | None = None
        status = 0
        written = 0  # answers in the last chunk written: maybe still in a buffer

        async def counting_send(message: Message) -> None:
            nonlocal session_id, status, written
            if message["type"] == "http.response.start":
                status = int(message.get("status", 0))
            await send(message)
            if message["type"] != "http.response.body":
                return
            body = bytes(message.get("body", b""))
            if session_id is None:
                found = _SESSION_ID.search(body)
                if found:
                    session_id = found.group(1).decode()
                    self.sessions[session_id] = _Session(client=current_client.get())
                return
            # The server's send waits for the connection's write buffer to drain before
            # it writes, so a chunk is out of this process once the next send returns;
            # until then it still holds memory (an 8 MiB answer per stream went
            # uncounted). The SSE pings every 15 s are such next sends.
            if written:
                self._delivered(session_id, written)
            written = body.count(_MESSAGE_EVENT)

        try:
            await self.app(scope, receive, counting_send)
        except ValueError:
            if not 400 <= status < 500:
                raise
            # The SDK answered the refused stream (421/403) and then raised.
            log.info("refused an SSE stream (HTTP %d)", status)
        finally:
            if session_id is not None:
                self._forget(session_id)

    def _owe(self, session: _Session, size: int) -> None:
        """Add ``size`` bytes (negative: free them) to the session, its client and the
        total."""
        session.outstanding_bytes += size
        self.outstanding_bytes += size
        left = self.client_bytes.get(session.client, 0) + size
        if left > 0:
            self.client_bytes[session.client] = left
        else:
            self.client_bytes.pop(session.client, None)

    def _delivered(self, session_id: str, count: int) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.outstanding == 0:
            return
        count = min(count, session.outstanding)
        freed = session.outstanding_bytes * count // session.outstanding
        session.outstanding -= count
        self.outstanding -= count
        self._owe(session, -freed)

    def _undo(self, session: _Session, size: int) -> None:
        if not session.alive or session.outstanding == 0:
            return
        session.outstanding -= 1
        self.outstanding -= 1
        self._owe(session, -min(size, session.outstanding_bytes))

    def _forget(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.outstanding -= session.outstanding
            self._owe(session, -session.outstanding_bytes)
            session.alive = False

    # -- messages posted to a session ------------------------------------------------
    async def _message(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"").decode("latin-1")
        found = re.search(r"(?:^|&)session_id=([0-9a-f]{32})(?:&|$)", query)
        session = self.sessions.get(found.group(1)) if found else None
        if session is None:  # unknown session: the SDK answers 400/404
            await self._with_body(scope, receive, send, None)
            return
        if session.outstanding >= MAX_OUTSTANDING_PER_SESSION:
            await self._refuse(
                send,
                429,
                "too_many_unread_responses",
                f"this SSE session has {session.outstanding} requests whose answers it has "
                f"not read from its stream (the limit is {MAX_OUTSTANDING_PER_SESSION}); "
                "read the event stream before sending more",
            )
            return
        if session.outstanding_bytes >= MAX_OUTSTANDING_BYTES_PER_SESSION:
            await self._refuse(
                send,
                429,
                "too_many_unread_bytes",
                f"this SSE session has {session.outstanding_bytes} bytes of requests whose "
                "answers it has not read from its stream (the limit is "
                f"{MAX_OUTSTANDING_BYTES_PER_SESSION}); read the event stream first",
            )
            return
        owed_by_client = self.client_bytes.get(session.client, 0)
        if owed_by_client >= MAX_OUTSTANDING_BYTES_PER_CLIENT:
            await self._refuse(
                send,
                429,
                "too_many_unread_bytes",
                f"this client's SSE sessions have {owed_by_client} bytes of requests whose "
                "answers they have not read (the limit is "
                f"{MAX_OUTSTANDING_BYTES_PER_CLIENT}); read the event streams first",
            )
            return
        if (
            self.outstanding >= MAX_OUTSTANDING_TOTAL
            or self.outstanding_bytes >= MAX_OUTSTANDING_BYTES_TOTAL
        ):
            await self._refuse(
                send,
                503,
                "server_busy",
                f"SSE sessions hold {self.outstanding} unread answers "
                f"({self.outstanding_bytes} bytes of requests; the limits are "
                f"{MAX_OUTSTANDING_TOTAL} and {MAX_OUTSTANDING_BYTES_TOTAL}); retry later",
            )
            return
        await self._with_body(scope, receive, send, session)

    # -- any request with a body -----------------------------------------------------
    async def _with_body(
        self, scope: Scope, receive: Receive, send: Send, session: _Session | None
    ) -> None:
        declared = _content_length(scope)
        reserved = declared or 0
        if self.bodies_in_flight + reserved > self.max_bodies_in_flight or (
            declared is None and self.bodies_in_flight >= self.max_bodies_in_flight
        ):
            await self._refuse(
                send,
                503,
                "server_busy",
                f"request bodies in flight: {self.bodies_in_flight} bytes, this one "
                f"{reserved}; the limit is {self.max_bodies_in_flight}; retry later",
            )
            return
        self.bodies_in_flight += reserved
        received = 0
        counted = False
        tail = b""

        async def counting_receive() -> Message:
            nonlocal received, counted, tail
            message = await receive()
            if message["type"] == "http.request":
                chunk = bytes(message.get("body", b""))
                received += len(chunk)
                if received > reserved:  # chunked, or longer than declared
                    self.bodies_in_flight += received - max(reserved, received - len(chunk))
                if (
                    session is not None
                    and session.alive
                    and not counted
                    and _REQUEST_ID in tail + chunk
                ):
                    counted = True  # a request (with an id): its answer will be outstanding
                    session.outstanding += 1
                    self.outstanding += 1
                tail = chunk[-3:]
                if (
                    session is not None
                    and counted
                    and session.alive
                    and not message.get("more_body", False)
                ):
                    self._owe(session, received + ANSWER_BASE_BYTES)
            return message

        status = 0

        async def watching_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message.get("status", 0))
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send if session else send)
        finally:
            self.bodies_in_flight -= max(reserved, received)
            if session is not None and counted and status != 202:
                # Not accepted (unparsable, refused): no answer will come on the stream.
                self._undo(session, received + ANSWER_BASE_BYTES)

    async def _refuse(self, send: Send, status: int, error: str, detail: str) -> None:
        self.refused += 1
        await _send_json(send, status, {"error": error, "detail": detail})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return max(0, int(value))
            except ValueError:
                return None
    return None


def max_bodies_in_flight_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """``POLICY_PROVER_MAX_BODIES_IN_FLIGHT_MB`` in bytes (default 192 MiB); a value that
    is not a positive integer is refused with a message naming the variable."""
    raw = environ.get(MAX_BODIES_IN_FLIGHT_ENV)
    if not raw:
        return DEFAULT_MAX_BODIES_IN_FLIGHT
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{MAX_BODIES_IN_FLIGHT_ENV} must be a positive integer, got {raw!r}")
    return value * 1024 * 1024


__all__ = ["TrafficLimits", "max_bodies_in_flight_from_env"]

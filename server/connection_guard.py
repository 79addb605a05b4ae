"""Connection limits uvicorn lacks: a cap on open connections, and timeouts for request
headers and bodies (a connection that sends nothing, trickles its headers or stalls its
body is closed), on top of uvicorn's idle keep-alive timeout.

uvicorn's ``limit_concurrency`` answers 503 but keeps every accepted connection open,
and nothing bounds how long a client may take to send a request: 1,100 idle connections
at a 1,024-descriptor limit stopped ``/health`` and every call while held. This h11
protocol subclass closes, checked once a second per connection:

- a connection over :attr:`GuardedH11Protocol.max_connections` as soon as it opens,
  unless an *idle* one (no request in progress: waiting for its first or next request
  head) can be closed in its place, the one idle the longest (600 idle sockets, renewed
  every 10 s, kept ``/health`` out for 10 s per wave; issue 24);
- a connection without a request in progress after :attr:`header_timeout_s` (from its
  opening or its last response: idle, or headers still incomplete);
- a request whose body is still arriving :attr:`body_timeout_s` after its headers;
- a request head (request line and headers) over :data:`MAX_HEADER_BYTES`, answered
  **431** first. h11's own limit only applies to a head still incomplete in its buffer:
  a 70 KiB head arriving at once passed.

Connections busy with requests are bounded per client by :mod:`server.client_caps`.

Nothing here reads the token: every limit holds before authentication.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

DEFAULT_MAX_CONNECTIONS = 512
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0
#: Largest request head (request line and headers) h11 buffers before refusing it.
MAX_HEADER_BYTES = 64 * 1024
CHECK_EVERY_S = 1.0
_HEAD_BODY = (
    b'{"error": "request_head_too_large", "detail": "the request line and headers exceed '
    + str(MAX_HEADER_BYTES).encode()
    + b' bytes"}'
)
_HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: "
    + str(len(_HEAD_BODY)).encode()
    + b"\r\n\r\n"
    + _HEAD_BODY
)
#: At most one warning per this many seconds about refused connections (no log flood).
WARN_EVERY_S = 10.0


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and header/body timeouts."""

    max_connections = DEFAULT_MAX_CONNECTIONS
    header_timeout_s = DEFAULT_HEADER_TIMEOUT_S
    body_timeout_s = DEFAULT_BODY_TIMEOUT_S
    refused = 0
    reclaimed = 0
    heads_refused = 0
    timed_out = 0
    _last_warning = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._idle_since = time.monotonic()
        self._request_since: float | None = None
        self._guard: asyncio.TimerHandle | None = None
        self._head = bytearray()
        if len(self.connections) > self.max_connections and not self._reclaim_idle():
            GuardedH11Protocol.refused += 1
            self._warn("refused a connection: %d open, the limit is %d")
            transport.abort()
            return
        self._guard = self.loop.call_later(CHECK_EVERY_S, self._check)

    def _busy(self) -> bool:
        cycle: Any = self.cycle
        return cycle is not None and not cycle.response_complete

    def _reclaim_idle(self) -> bool:
        """Close the connection idle the longest (not this one) to make room; False if
        every other connection has a request in progress."""
        oldest: GuardedH11Protocol | None = None
        for other in self.connections:
            if other is self or not isinstance(other, GuardedH11Protocol):
                continue
            if other._busy() or other.transport is None or other.transport.is_closing():
                continue
            if oldest is None or other._idle_since < oldest._idle_since:
                oldest = other
        if oldest is None:
            return False
        GuardedH11Protocol.reclaimed += 1
        oldest.transport.abort()
        self.connections.discard(oldest)  # its connection_lost comes later
        return True

    def data_received(self, data: bytes) -> None:
        if self._head_too_large(data):
            return
        super().data_received(data)

    def _head_too_large(self, data: bytes) -> bool:
        """Count the bytes of a request head still arriving; past the limit, answer 431
        and close (True)."""
        if self._busy() or self.conn.their_state not in (h11.IDLE, h11.DONE):
            self._head.clear()
            return False
        start = len(self._head)
        self._head += data[: MAX_HEADER_BYTES + 4 - start] if start < MAX_HEADER_BYTES else b""
        end = self._head.find(b"\r\n\r\n", max(0, start - 3))
        size = len(self._head) if end < 0 else end + 4
        if end >= 0:
            self._head.clear()
        if size <= MAX_HEADER_BYTES:
            return False
        GuardedH11Protocol.heads_refused += 1
        self.transport.write(_HEAD_TOO_LARGE)
        self.transport.close()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        if getattr(self, "_guard", None) is not None:
            self._guard.cancel()  # type: ignore[union-attr]
            self._guard = None
        super().connection_lost(exc)

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not None and self.cycle is not before:
            self._request_since = time.monotonic()

    def on_response_complete(self) -> None:
        self._idle_since = time.monotonic()
        self._request_since = None
        super().on_response_complete()

    def _check(self) -> None:
        self._guard = None
        if self.transport.is_closing():
            return
        now = time.monotonic()
        cycle: Any = self.cycle
        in_progress = cycle is not None and not cycle.response_complete
        if not in_progress and now - self._idle_since > self.header_timeout_s:
            self._close("no complete request within %.0f s", self.header_timeout_s)
            return
        if (
            in_progress
            and cycle.more_body
            and self._request_since is not None
            and now - self._request_since > self.body_timeout_s
        ):
            self._close("request body incomplete after %.0f s", self.body_timeout_s)
            return
        self._guard = self.loop.call_later(CHECK_EVERY_S, self._check)

    def _close(self, why: str, seconds: float) -> None:
        GuardedH11Protocol.timed_out += 1
        log.debug("closing a connection: " + why, seconds)
        self.transport.close()

    def _warn(self, message: str) -> None:
        now = time.monotonic()
        if now - GuardedH11Protocol._last_warning >= WARN_EVERY_S:
            GuardedH11Protocol._last_warning = now
            log.warning(message, len(self.connections) - 1, self.max_connections)


#: Environment variables that override the limits (positive numbers).
MAX_CONNECTIONS_ENV = "POLICY_PROVER_MAX_CONNECTIONS"
HEADER_TIMEOUT_ENV = "POLICY_PROVER_HEADER_TIMEOUT_S"
BODY_TIMEOUT_ENV = "POLICY_PROVER_BODY_TIMEOUT_S"


def configure_from_env(environ: Mapping[str, str]) -> None:
    """Apply the limits given in the environment; a value that is not a positive number
    is refused with a message naming the variable."""
    for name, attribute, kind in (
        (MAX_CONNECTIONS_ENV, "max_connections", int),
        (HEADER_TIMEOUT_ENV, "header_timeout_s", float),
        (BODY_TIMEOUT_ENV, "body_timeout_s", float),
    ):
        raw = environ.get(name)
        if not raw:
            continue
        try:
            value = kind(raw)
        except ValueError:
            value = 0
        if value <= 0:
            raise ValueError(f"{name} must be a positive number, got {raw!r}")
        setattr(GuardedH11Protocol, attribute, value)


#: Descriptors kept free, besides those open when the server starts, for everything but
#: client connections, so that the cap is reached before the process runs out of
#: descriptors and asyncio's accept starts failing.
RESERVED_DESCRIPTORS = 16
MIN_CONNECTIONS = 8


def fit_connection_cap_to_descriptors() -> int | None:
    """Raise the soft descriptor limit to the hard one, and lower the connection cap to
    fit under it; the lowered cap, or None if it fitted.

    A cap above the descriptor limit cannot hold: once descriptors run out, accept
    fails (asyncio then logged a record per attempt and, at shutdown, thousands of
    tracebacks) and ``/health`` is refused with everything else.
    """
    try:
        import resource
    except ImportError:  # not on POSIX: nothing to fit
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return None
    room = max(MIN_CONNECTIONS, soft - _open_descriptors() - RESERVED_DESCRIPTORS)
    if GuardedH11Protocol.max_connections <= room:
        return None
    GuardedH11Protocol.max_connections = room
    return room


def _open_descriptors() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc: assume a few dozen
        return 32

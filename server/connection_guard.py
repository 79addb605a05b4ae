"""Connection limits uvicorn lacks: a cap on open connections, and timeouts for request
headers and bodies (a connection that sends nothing, trickles its headers or stalls its
body is closed), on top of uvicorn's idle keep-alive timeout.

uvicorn's ``limit_concurrency`` answers 503 but keeps every accepted connection open,
and nothing bounds how long a client may take to send a request: 1,100 idle connections
at a 1,024-descriptor limit stopped ``/health`` and every call while held. This h11
protocol subclass closes, checked once a second per connection:

- any connection over :attr:`GuardedH11Protocol.max_connections` as soon as it opens;
- a connection without a request in progress after :attr:`header_timeout_s` (from its
  opening or its last response: idle, or headers still incomplete);
- a request whose body is still arriving :attr:`body_timeout_s` after its headers.

Nothing here reads the token: every limit holds before authentication.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

DEFAULT_MAX_CONNECTIONS = 512
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0
#: Largest request head (request line and headers) h11 buffers before refusing it.
MAX_HEADER_BYTES = 64 * 1024
CHECK_EVERY_S = 1.0
#: At most one warning per this many seconds about refused connections (no log flood).
WARN_EVERY_S = 10.0


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and header/body timeouts."""

    max_connections = DEFAULT_MAX_CONNECTIONS
    header_timeout_s = DEFAULT_HEADER_TIMEOUT_S
    body_timeout_s = DEFAULT_BODY_TIMEOUT_S
    refused = 0
    timed_out = 0
    _last_warning = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._idle_since = time.monotonic()
        self._request_since: float | None = None
        self._guard: asyncio.TimerHandle | None = None
        if len(self.connections) > self.max_connections:
            GuardedH11Protocol.refused += 1
            self._warn("refused a connection: %d open, the limit is %d")
            transport.abort()
            return
        self._guard = self.loop.call_later(CHECK_EVERY_S, self._check)

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

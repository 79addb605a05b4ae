"""Running the MCP server on a transport: stdio, SSE or stateless streamable HTTP.

Logs go to stderr only. On stdio, stdout carries protocol messages and nothing else; the
SDK points file descriptor 1 at stderr while serving, and nothing here prints.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import sys
from dataclasses import dataclass, field

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from server.client_caps import CapLimits, ClientCaps
from server.client_key import ClientKeyMiddleware
from server.http_security import (
    MAX_REQUEST_BODY_BYTES,
    ASGIApp,
    BearerTokenMiddleware,
    allowed_hosts,
    allowed_origins,
)
from server.traffic_limits import TrafficLimits, max_bodies_in_flight_from_env

log = logging.getLogger(__name__)

STREAMABLE_HTTP_PATH = "/mcp"
SSE_PATH = "/sse"
SSE_MESSAGE_PATH = "/messages/"


@dataclass(frozen=True)
class HttpOptions:
    transport: str  # "sse" or "streamable-http"
    host: str
    port: int
    token: str | None
    extra_allowed_hosts: list[str] = field(default_factory=list)
    log_level: str = "info"


#: glibc's ``mallopt`` parameter for the number of malloc arenas.
_M_ARENA_MAX = -8
#: Arenas the server keeps: checks allocate on many worker threads, and glibc's default
#: (8 per core) kept freed memory in each: 200 clients, 8,000 checks in-process grew RSS
#: to 815 MB, of which ``malloc_trim`` gave back 574 MB; with 2 arenas it stays near
#: 250 MB at the same throughput.
MALLOC_ARENAS = 2


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process; True if the cap was applied.

    Left alone when the operator set ``MALLOC_ARENA_MAX`` (glibc reads it at start), and
    a no-op where the C library has no ``mallopt`` (macOS) or ignores it (musl).
    """
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, arenas))


def configure_logging(level: str) -> None:
    """Send every log record of the process to stderr at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level.upper())


def run_stdio(server: MCPServer) -> None:
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # as over HTTP: see its comment
    anyio.run(server.run_stdio_async)


def security_settings(options: HttpOptions) -> TransportSecuritySettings:
    hosts = allowed_hosts(options.host, options.port, options.extra_allowed_hosts)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=allowed_origins(hosts),
    )


def build_http_app(server: MCPServer, options: HttpOptions) -> ASGIApp:
    """The ASGI application for ``options.transport``, with every protection applied."""
    security = security_settings(options)
    if options.transport == "streamable-http":
        app: ASGIApp = server.streamable_http_app(
            streamable_http_path=STREAMABLE_HTTP_PATH,
            stateless_http=True,
            max_request_body_size=MAX_REQUEST_BODY_BYTES,
            transport_security=security,
            host=options.host,
        )
    elif options.transport == "sse":
        app = server.sse_app(
            sse_path=SSE_PATH,
            message_path=SSE_MESSAGE_PATH,
            max_request_body_size=MAX_REQUEST_BODY_BYTES,
            transport_security=security,
            host=options.host,
        )
    else:
        raise ValueError(f"not an HTTP transport: {options.transport}")
    sse = options.transport == "sse"
    app = TrafficLimits(  # bodies in flight, unread SSE answers per session
        app,
        sse_path=SSE_PATH if sse else None,
        message_path=SSE_MESSAGE_PATH if sse else None,
        max_bodies_in_flight=max_bodies_in_flight_from_env(),
    )
    from server.connection_guard import GuardedH11Protocol

    stream_paths = frozenset({SSE_PATH if sse else STREAMABLE_HTTP_PATH})
    limits = CapLimits.for_connections(GuardedH11Protocol.max_connections)
    app = ClientCaps(app, limits, stream_paths)  # requests and streams per client
    app = ClientKeyMiddleware(app)  # names the client: its address (or its token, below)
    if options.token:
        app = BearerTokenMiddleware(app, options.token)
    return app


#: Idle keep-alive connections are closed after this long.
KEEP_ALIVE_TIMEOUT_S = 5


class _RateLimitedAcceptErrors(logging.Filter):
    """At most one "socket.accept() out of system resource" record per minute, without
    its traceback: under descriptor exhaustion asyncio logs one per accept attempt, which
    wrote 73 MB in 15 s. Likewise for the accept retries it schedules meanwhile, which
    fail with a traceback each once the listening socket is closed at shutdown."""

    def __init__(self) -> None:
        super().__init__()
        self._last = float("-inf")
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        import time

        message = str(record.msg)
        if "out of system resource" not in message and "_start_serving" not in message:
            return True
        now = time.monotonic()
        if now - self._last < 60.0:
            self.suppressed += 1
            return False
        self._last = now
        record.exc_info = None  # the message says it; the traceback adds nothing
        return True


class _NoClientDisconnectTraceback(logging.Filter):
    """A client that goes away mid-request (or a connection the guard closed) is not a
    server error: keep the record, drop its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        from starlette.requests import ClientDisconnect

        if record.exc_info and isinstance(record.exc_info[1], ClientDisconnect):
            record.exc_info = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


_SESSION_ID = re.compile(
    r"[0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


class _RedactSessionIds(logging.Filter):
    """An SSE session id is the session's only secret: the access log's
    ``POST /messages/?session_id=...`` lines and the SDK's warnings about unknown
    sessions carry it. Replace every id-shaped token in the record with ``<session>``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SESSION_ID.sub("<session>", message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


#: The interpreter's thread switch interval while serving (Python's default: 5 ms). With
#: dozens of check threads in Python stages, the event loop waited for the GIL long
#: enough to answer calls past their deadline; at 1 ms, 80 concurrent slow checks
#: in-process overran by at most 25-53 ms (74-93 ms at 5 ms).
SWITCH_INTERVAL_S = 0.001


def run_http(server: MCPServer, options: HttpOptions) -> None:
    import uvicorn

    sys.setswitchinterval(SWITCH_INTERVAL_S)
    from server.connection_guard import (
        MAX_HEADER_BYTES,
        GuardedH11Protocol,
        configure_from_env,
        fit_connection_cap_to_descriptors,
    )

    configure_from_env(os.environ)
    lowered = fit_connection_cap_to_descriptors()
    if lowered is not None:
        log.warning("connection cap lowered to %d to fit the descriptor limit (ulimit -n)", lowered)
    app = build_http_app(server, options)  # per-client caps follow the connection cap
    path = STREAMABLE_HTTP_PATH if options.transport == "streamable-http" else SSE_PATH
    log.info(
        "serving MCP over %s on http://%s:%d%s (token %s)",
        options.transport,
        options.host,
        options.port,
        path,
        "required" if options.token else "not configured",
    )
    logging.getLogger("asyncio").addFilter(_RateLimitedAcceptErrors())
    for name in ("mcp.server.streamable_http", "mcp.server.sse"):
        logging.getLogger(name).addFilter(_NoClientDisconnectTraceback())
    for name in ("uvicorn.access", "mcp.server.sse"):
        logging.getLogger(name).addFilter(_RedactSessionIds())
    # The SSE transport logs each session id at INFO; an id is a session's only secret.
    sse_log = logging.getLogger("mcp.server.sse")
    if sse_log.getEffectiveLevel() < logging.WARNING:
        sse_log.setLevel(logging.WARNING)
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        log_config=None,  # keep our stderr handler; uvicorn's default logs access to stdout
        log_level=options.log_level.lower(),
        lifespan="on",
        http=GuardedH11Protocol,  # connection cap, header and body timeouts
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_TIMEOUT_S,
    )
    uvicorn.Server(config).run()

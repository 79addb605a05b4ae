"""``policy-prover serve [--transport stdio|sse|streamable-http] [--host H] [--port P]``.

Runs the MCP server. stdio is the default (what Claude Code and Cursor launch). The HTTP
transports bind loopback by default; binding any other address requires a bearer token
in ``POLICY_PROVER_TOKEN``, and when the token is set every MCP request must carry it.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from typing import Any

from server.output import write

TRANSPORTS = ("stdio", "sse", "streamable-http")
#: Same as ``server.cache.CACHE_SIZE_ENV``, ``server.http_security.TOKEN_ENV`` and
#: ``ALLOWED_HOSTS_ENV``; spelled out so that building the parser imports neither module
#: (every command builds the whole parser; ``http_security`` pulls in socket and hmac).
CACHE_SIZE_ENV = "POLICY_PROVER_CACHE_SIZE"
TOKEN_ENV = "POLICY_PROVER_TOKEN"
ALLOWED_HOSTS_ENV = "POLICY_PROVER_ALLOWED_HOSTS"
LOG_LEVELS = ("debug", "info", "warning", "error")
EXIT_USAGE = 2


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the MCP server (stdio by default)",
        description=(
            "Run the MCP server with the check_boundary tool. HTTP transports listen on "
            f"loopback unless --host says otherwise; a non-loopback --host requires {TOKEN_ENV}, "
            "and when it is set every MCP request must send 'Authorization: Bearer <token>'. "
            "GET /health answers without a token."
        ),
    )
    parser.add_argument("--transport", choices=TRANSPORTS, default="stdio", help="default: stdio")
    parser.add_argument(
        "--host", default="127.0.0.1", help="HTTP bind address (default: 127.0.0.1)"
    )
    parser.add_argument("--port", type=_port, default=8000, help="HTTP port (default: 8000)")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="another Host header value clients use (e.g. a Service or proxy name); "
        f"repeatable; also read from {ALLOWED_HOSTS_ENV} (comma-separated); "
        "'name:*' allows any port",
    )
    parser.add_argument(
        "--max-concurrent-checks",
        type=_positive,
        default=None,
        metavar="N",
        help="checks admitted at once in this process (default: 32; of those, inputs "
        "over 256 KiB at most one per CPU); checks beyond it wait, at most until their "
        "deadline",
    )
    parser.add_argument(
        "--max-concurrent-solves",
        type=_positive,
        default=None,
        metavar="N",
        help="Z3 solves run at once in this process (default: the CPU count); only the "
        "solver stage of a check takes one, so quick checks never wait for a solve",
    )
    parser.add_argument(
        "--cache-size",
        type=_cache_size,
        default=None,
        metavar="N",
        help="check_boundary results kept for identical repeated checks (default: "
        f"{CACHE_SIZE_ENV} or 256; 0 disables the cache)",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=None,
        help="stderr log level (default: warning on stdio, info on HTTP)",
    )
    parser.add_argument(
        "--environment",
        metavar="FILE",
        default=None,
        help="environment evidence document used by every tool call that passes none "
        "(see `policy-prover environment`)",
    )
    parser.set_defaults(run=run)


def _load_default_environment(path: str) -> str | None:
    """Read and validate the server's default evidence; the problem, or None."""
    from prover.environment import EnvironmentLoadError, load_environment
    from prover.results.text import escape_control
    from server.environment_default import set_default_environment
    from server.policy_files import PolicyFileError, read_policy_file

    try:
        text = read_policy_file(path)
        load_environment(text)
    except (PolicyFileError, EnvironmentLoadError) as exc:
        return escape_control(str(exc))
    set_default_environment(text)
    return None


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port '{text}'") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be between 1 and 65535, got {value}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _cache_size(text: str) -> int:
    from server.cache import parse_cache_size

    try:
        return parse_cache_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid cache size '{text}' (a number >= 0)") from None


def run(args: argparse.Namespace) -> int:
    from server.http_security import is_loopback, parse_host_list

    token = (os.environ.get(TOKEN_ENV) or "").strip() or None
    http = args.transport != "stdio"
    if token is not None and not token.replace(",", "").strip():
        write(sys.stderr, f"policy-prover: {TOKEN_ENV} lists no token (only commas)\n")
        return EXIT_USAGE
    if http and not is_loopback(args.host) and token is None:
        write(
            sys.stderr,
            f"policy-prover: refusing to serve on non-loopback address '{args.host}' without "
            f"a bearer token; set {TOKEN_ENV}\n",
        )
        return EXIT_USAGE

    if args.environment is not None:
        problem = _load_default_environment(args.environment)
        if problem is not None:
            write(sys.stderr, f"policy-prover: --environment '{args.environment}': {problem}\n")
            return EXIT_USAGE

    from server.serving import (
        HttpOptions,
        configure_logging,
        limit_malloc_arenas,
        run_http,
        run_stdio,
    )

    configure_logging(args.log_level or ("info" if http else "warning"))
    limit_malloc_arenas()
    from prover.run.runner import set_concurrency_limit
    from prover.run.solver_slots import set_solver_slots
    from server.app import create_server

    if args.max_concurrent_checks is not None:
        set_concurrency_limit(args.max_concurrent_checks)
    if args.max_concurrent_solves is not None:
        set_solver_slots(args.max_concurrent_solves)
    if args.cache_size is not None:
        from server.cache import set_cache_size

        set_cache_size(args.cache_size)
    server = create_server()
    from server.warmup import warm_up

    # Before the first request: a first call must not pay for imports and set-up.
    seconds = warm_up()
    logging.getLogger("server").info("prover warmed up in %.0f ms", seconds * 1000)
    # What is loaded now lives as long as the process: out of the cyclic collector's
    # sight, a full collection during a call no longer walks every module's objects (one
    # took about 100 ms in the middle of a check, past its deadline).
    gc.freeze()
    if not http:
        run_stdio(server)
        return 0
    extra_hosts = [*parse_host_list(os.environ.get(ALLOWED_HOSTS_ENV)), *args.allowed_host]
    options = HttpOptions(
        transport=args.transport,
        host=args.host,
        port=args.port,
        token=token,
        extra_allowed_hosts=extra_hosts,
        log_level=args.log_level or "info",
    )
    run_http(server, options)
    return 0

"""The ``policy-prover`` command line.

``check`` reproduces the reference ``openshell-prover check`` contract (spec §12) so that
scripts written for it work unchanged; ``serve`` runs the MCP server; ``demo`` drives the
server as an MCP client would. Usage errors exit 2 with the message on stderr and nothing
on stdout. ``check`` never imports the MCP SDK: start-up time matters to scripts.
"""

from __future__ import annotations

import argparse
import sys

from prover import __version__
from server.commands import load_commands
from server.interrupt import EXIT_INTERRUPTED

PROG = "policy-prover"

DESCRIPTION = """\
Prove with Z3 that an OpenShell sandbox policy allows nothing beyond a boundary
policy, from the command line or as an MCP server for agents."""

EPILOG = """\
exit codes of check: 0 within_boundary, 1 exceeds_boundary, 2 error,
3 unsupported or inconclusive, 130 cancelled (Ctrl-C)"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``command`` (a command's name), the parser with only that
    command, which parses an argument list starting with it exactly as the whole parser
    does (the command list shows only in the top level's help and its "invalid choice"
    error, neither of which such a list reaches) and is built faster: a cold start pays
    for one command's module and options, not all of them."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for module in load_commands(only=command):
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    arguments = sys.argv[1:] if argv is None else argv
    parser = build_parser(arguments[0] if arguments else None)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # --help, --version and usage errors
        return _exit_status(exc.code)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return status


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 2

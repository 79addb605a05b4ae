"""``policy-prover hook claude-code|cursor [--boundary FILE] [--current FILE] [...]``.

Reads one hook event on stdin. When the shell command in it applies an OpenShell policy
(see :mod:`server.hooks.openshell`), runs the prover and, unless the policy is proven
within the boundary (and, for ``policy update``, nothing needs review), prints the tool's
denial with the reason. Anything else passes untouched: exit 0, no output. The no-op
path reads the event and looks for the word ``openshell``; it imports nothing of the
prover, Z3, pydantic or the MCP stack. Unreadable input, a missing boundary or an
internal failure denies (fail closed). Exit status is 0 whenever an answer was written,
as both tools read a JSON answer only on exit 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from server.commands.options import add_timeout_option

BOUNDARY_ENV = "POLICY_PROVER_BOUNDARY"
CURRENT_ENV = "POLICY_PROVER_CURRENT"
CREDENTIALS_ENV = "POLICY_PROVER_CREDENTIALS"
TOOLS = ("claude-code", "cursor")
EXIT_USAGE = 2


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "hook",
        help="pre-execution hook for Claude Code and Cursor: check a policy before OpenShell "
        "applies it",
        description=(
            "Read a Claude Code PreToolUse event (claude-code) or a Cursor "
            "beforeShellExecution event (cursor) on stdin. If its shell command applies an "
            "OpenShell policy (openshell policy set/update, sandbox create, "
            "OPENSHELL_SANDBOX_POLICY=FILE), check it against the boundary and deny the "
            "command with the verdict and the next step unless it is within_boundary. Any "
            "other command passes: exit 0, no output."
        ),
    )
    parser.add_argument("tool", choices=TOOLS, help="the event and answer format")
    parser.add_argument(
        "--boundary",
        metavar="FILE",
        help=f"boundary policy (default: ${BOUNDARY_ENV}); without one, applying a policy "
        "is denied",
    )
    parser.add_argument(
        "--current",
        metavar="FILE",
        help=f"the sandbox's current policy, for 'policy update' (default: ${CURRENT_ENV}; "
        "else the boundary stands in for it)",
    )
    parser.add_argument(
        "--credentials",
        metavar="FILE",
        help=f"credential set for 'policy update' assessments (default: ${CREDENTIALS_ENV})",
    )
    add_timeout_option(parser, "all checks of one command")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from server.hooks import events

    reader, denial = (
        (events.claude_code_event, events.claude_code_denial)
        if args.tool == "claude-code"
        else (events.cursor_event, events.cursor_denial)
    )
    try:
        event = reader(events.parse(sys.stdin.buffer.read(events.MAX_EVENT_BYTES + 1)))
    except events.EventError as exc:
        return _deny(denial, f"policy-prover hook: cannot read the hook event: {exc}.")
    if event is None or "openshell" not in event.command.lower():
        return 0  # the cheap no-op path: nothing here applies an OpenShell policy
    try:
        reasons = _reasons(event, args)
    except Exception as exc:  # fail closed: an internal failure never lets a command pass
        reasons = [
            f"policy-prover hook: internal error: {type(exc).__name__}: {exc}. The command "
            "was blocked because it could not be checked."
        ]
    if not reasons:
        return 0
    return _deny(denial, "\n\n".join(reasons))


def _reasons(event: Any, args: argparse.Namespace) -> list[str]:
    from server.hooks.openshell import actions
    from server.hooks.shell import ShellSyntaxError, split_commands

    environ = dict(os.environ)
    root = _project_root(event, args.tool)
    cwd = event.cwd if event.cwd and os.path.isabs(event.cwd) else root
    try:
        found = actions(split_commands(event.command, cwd, environ), environ)
    except ShellSyntaxError as exc:
        return [
            f"policy-prover hook: cannot parse this command line, which mentions openshell "
            f"({exc}), so the policy it may apply cannot be checked. Run the openshell "
            "command on its own, with literal arguments."
        ]
    if not found:
        return []
    from server.hooks.verdicts import Inputs, objections

    inputs = Inputs(
        boundary=_configured(args.boundary, BOUNDARY_ENV, root),
        current=_configured(args.current, CURRENT_ENV, root),
        credentials=_configured(args.credentials, CREDENTIALS_ENV, root),
        timeout_ms=args.timeout,
    )
    return objections(found, inputs)


def _project_root(event: Any, tool: str) -> str:
    """Where relative configuration paths start: the project, whatever directory the tool
    starts the hook in. Claude Code names it in ``CLAUDE_PROJECT_DIR``; a Cursor event
    lists ``workspace_roots``; otherwise the hook's own working directory."""
    if tool == "claude-code":
        root = os.environ.get("CLAUDE_PROJECT_DIR")
    else:
        root = event.root
    return root if root and os.path.isabs(root) else os.getcwd()


def _configured(value: str | None, env: str, root: str) -> str | None:
    """An option, else its environment variable, as an absolute path."""
    chosen = value if value else os.environ.get(env) or None
    if not chosen:
        return None
    return os.path.normpath(os.path.join(root, os.path.expanduser(chosen)))


def _deny(denial: Any, reason: str) -> int:
    import json

    from server.output import write

    write(sys.stdout, json.dumps(denial(reason), ensure_ascii=False) + "\n")
    return 0

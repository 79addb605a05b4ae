"""``policy-prover hook claude-code|cursor [--boundary FILE] [--current FILE] [...]``.

Reads one hook event on stdin. When the shell command in it applies an OpenShell policy
(see :mod:`server.hooks.openshell`), runs the prover and, unless the policy is proven
within the boundary (and, for ``policy update``, nothing needs review), prints the tool's
denial with the reason. A command whose effect the hook cannot know that could reach
``openshell`` is denied, or, when nothing on the line names OpenShell, the user is asked.
Anything else passes untouched: exit 0, no output. The no-op path reads the event and
the command line (:mod:`server.hooks.shell`, standard library only); it imports nothing
of the prover, Z3, pydantic or the MCP stack. Unreadable input, a missing boundary or an
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
            "command with the verdict and the next step unless it is within_boundary. A "
            "command whose effect cannot be known that could run openshell is denied, or "
            "the user is asked. Any other command passes: exit 0, no output."
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

    reader, answer = (
        (events.claude_code_event, events.claude_code_answer)
        if args.tool == "claude-code"
        else (events.cursor_event, events.cursor_answer)
    )
    try:
        event = reader(events.parse(sys.stdin.buffer.read(events.MAX_EVENT_BYTES + 1)))
    except events.EventError as exc:
        return _answer(answer, "deny", [f"policy-prover hook: cannot read the hook event: {exc}."])
    if event is None:
        return 0
    if len(event.command) > events.MAX_COMMAND_CHARS:
        return _answer(
            answer,
            "deny",
            [
                f"policy-prover hook: the command is {len(event.command)} characters long; the "
                f"hook checks commands of up to {events.MAX_COMMAND_CHARS} characters. Write "
                "long content to a file with the editor tool and run a shorter command."
            ],
        )
    try:
        denials, asks = _reasons(event, args)
    except Exception as exc:  # fail closed: an internal failure never lets a command pass
        denials, asks = [_internal(exc)], []
    if denials:
        return _answer(answer, "deny", denials + asks)
    if asks:
        return _answer(answer, "ask", asks)
    return 0


def _internal(exc: Exception) -> str:
    from prover.results.text import escape_control

    return escape_control(
        f"policy-prover hook: internal error: {type(exc).__name__}: {exc}. The command "
        "was blocked because it could not be checked."
    )


def _reasons(event: Any, args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The reasons to deny and the reasons to ask; both empty: no objection."""
    from server.hooks.openshell import Unverifiable, actions, mentions_openshell
    from server.hooks.shell import ShellSyntaxError, TooComplex, split_commands

    environ = dict(os.environ)
    root = _project_root(event, args.tool)
    cwd = event.cwd if event.cwd and os.path.isabs(event.cwd) else root
    mentions = mentions_openshell(event.command)
    try:
        found = actions(split_commands(event.command, cwd, environ), environ, mentions)
    except TooComplex as exc:
        return [f"policy-prover hook: the command line is too complex to check: {exc}."], []
    except ShellSyntaxError as exc:
        from prover.results.text import escape_control

        reason = (
            f"policy-prover hook: cannot parse this command line ({escape_control(str(exc))}), "
            "so the hook cannot "
            "tell whether it applies an OpenShell policy."
        )
        if mentions:
            reason = reason.replace("command line (", "command line, which mentions openshell (")
            return [reason + " Run the openshell command on its own, with literal arguments."], []
        return [], [reason]
    if not found:
        return [], []
    from server.hooks.verdicts import Inputs, objections, unverifiable_reason

    asks = [unverifiable_reason(a) for a in found if isinstance(a, Unverifiable) and a.ask]
    checked = [a for a in found if not (isinstance(a, Unverifiable) and a.ask)]
    if not checked:
        return [], asks
    inputs = Inputs(
        boundary=_configured(args.boundary, BOUNDARY_ENV, root),
        current=_configured(args.current, CURRENT_ENV, root),
        credentials=_configured(args.credentials, CREDENTIALS_ENV, root),
        timeout_ms=args.timeout,
    )
    return objections(checked, inputs), asks


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


def _answer(answer: Any, decision: str, reasons: list[str]) -> int:
    import json

    from server.output import write

    write(sys.stdout, json.dumps(answer(decision, "\n\n".join(reasons)), ensure_ascii=False) + "\n")
    return 0

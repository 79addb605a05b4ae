"""The two hook protocols: what each tool sends on stdin and what a denial looks like.

Claude Code, ``PreToolUse`` (documented input: ``session_id``, ``transcript_path``,
``cwd``, ``permission_mode``, ``hook_event_name``, ``tool_name``, ``tool_input``,
``tool_use_id``; for the ``Bash`` tool ``tool_input`` holds ``command``, and optionally
``description``, ``timeout``, ``run_in_background``). A denial is exit 0 with
``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": ...}}``; Claude Code shows the reason to the model.

Cursor, ``beforeShellExecution`` (documented input: ``command``, ``cwd``, ``sandbox`` and
the common ``hook_event_name``, ``conversation_id``, ``generation_id``, ``model``,
``cursor_version``, ``workspace_roots``, ``user_email``, ``transcript_path``). A denial is
``{"permission": "deny", "user_message": ..., "agent_message": ...}``. Cursor 1.7 spelt the
two messages ``userMessage`` and ``agentMessage``; both spellings are written so that the
denial reads the same in every version.

"No objection" is no output at all and exit 0 for both tools, so their own permission
rules still apply: the hook never answers ``allow``. When it cannot tell what a command
will run and nothing on the line names OpenShell, it answers ``ask`` (both tools then ask
their user, showing the reason).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

#: Largest event read from stdin (a command line may carry a here-document).
MAX_EVENT_BYTES = 2 * 1024 * 1024
#: Longest command checked; a longer one is denied (its parse would take seconds).
MAX_COMMAND_CHARS = 1_000_000
#: Deepest JSON nesting accepted (a real event nests 3 levels).
MAX_EVENT_DEPTH = 32

CLAUDE_EVENT = "PreToolUse"
CLAUDE_TOOL = "Bash"
CURSOR_EVENT = "beforeShellExecution"


class EventError(ValueError):
    """The event cannot be read; the message says why (the hook then denies)."""


class ShellEvent(NamedTuple):
    """A shell command about to run, and the directory it runs in (if the event says).

    (A named tuple, not a dataclass: ``dataclasses`` alone would add a dozen modules to the
    no-op path.)
    """

    command: str
    cwd: str | None
    #: The project root the event names (Cursor's first workspace root), if any.
    root: str | None = None


def parse(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_EVENT_BYTES:
        raise EventError(f"the hook event exceeds {MAX_EVENT_BYTES} bytes")
    try:
        document = json.loads(data)
    except RecursionError:
        raise EventError(f"the hook event nests deeper than {MAX_EVENT_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise EventError(f"the hook event is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise EventError("the hook event is not a JSON object")
    _check_depth(document)
    return document


def _check_depth(document: Any) -> None:
    """Refuse an event nested deeper than :data:`MAX_EVENT_DEPTH` (iteratively)."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_EVENT_DEPTH:
            raise EventError(f"the hook event nests deeper than {MAX_EVENT_DEPTH} levels")
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))


def _text(document: dict[str, Any], key: str) -> str | None:
    value = document.get(key)
    return value if isinstance(value, str) and value else None


def claude_code_event(document: dict[str, Any]) -> ShellEvent | None:
    """The Bash command of a ``PreToolUse`` event; ``None`` for any other event or tool."""
    if document.get("hook_event_name", CLAUDE_EVENT) != CLAUDE_EVENT:
        return None
    if document.get("tool_name") != CLAUDE_TOOL:
        return None
    tool_input = document.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        raise EventError("the Bash event has no tool_input.command string")
    return ShellEvent(command=command, cwd=_text(document, "cwd"))


def cursor_event(document: dict[str, Any]) -> ShellEvent | None:
    """The command of a ``beforeShellExecution`` event; ``None`` for any other event."""
    if document.get("hook_event_name", CURSOR_EVENT) != CURSOR_EVENT:
        return None
    command = document.get("command")
    if not isinstance(command, str):
        raise EventError("the beforeShellExecution event has no command string")
    roots = document.get("workspace_roots")
    root = (
        roots[0] or None
        if isinstance(roots, list) and roots and isinstance(roots[0], str)
        else None
    )
    return ShellEvent(command=command, cwd=_text(document, "cwd") or root, root=root)


def claude_code_answer(decision: str, reason: str) -> dict[str, Any]:
    """``deny`` (the reason goes to the model) or ``ask`` (the user is asked)."""
    return {
        "hookSpecificOutput": {
            "hookEventName": CLAUDE_EVENT,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def cursor_answer(decision: str, reason: str) -> dict[str, Any]:
    summary = reason.split("\n", 1)[0]
    return {
        "permission": decision,
        "user_message": summary,
        "agent_message": reason,
        "userMessage": summary,
        "agentMessage": reason,
    }


def claude_code_denial(reason: str) -> dict[str, Any]:
    return claude_code_answer("deny", reason)


def cursor_denial(reason: str) -> dict[str, Any]:
    return cursor_answer("deny", reason)

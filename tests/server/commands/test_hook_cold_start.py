"""What ``policy-prover hook`` imports: an unrelated command costs no prover import.

Claude Code and Cursor run the hook before every shell command, so its no-op path must
stay at the cost of ``policy-prover --version``: these tests count the modules a fresh
interpreter loads (never the wall-clock time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import server

REPO_ROOT = Path(server.__file__).resolve().parent.parent
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("POLICY_PROVER_")},
    "PYTHONPATH": str(REPO_ROOT),
}
PROBE = """
import json, sys
from server.cli import main
status = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(status)
"""
#: What a command that applies no policy may load beyond ``policy-prover --version``:
#: the event reader and the shell parser, which reads every command (standard library only).
NO_OP_EXTRA = {
    "server.hooks",
    "server.hooks.events",
    "server.hooks.shell",
    "server.hooks.words",
    "server.hooks.openshell",
}
HEAVY = ("z3", "pydantic", "pydantic_core", "yaml", "mcp", "anyio", "starlette", "uvicorn")
BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only: [/usr, /etc]\n"
CANDIDATE = "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n"


def _modules(argv: list[str], event: dict[str, object] | None, cwd: Path) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        input=json.dumps(event).encode() if event is not None else b"",
        cwd=cwd,
        env=ENV,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    marker = done.stderr.decode().rpartition("\nMODULES ")[2]
    return done.stdout.decode(), set(json.loads(marker))


def _claude(command: str, cwd: Path) -> dict[str, object]:
    return {
        "session_id": "abc123",
        "transcript_path": "/home/user/.claude/projects/p/00893aaf.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "List files"},
        "tool_use_id": "toolu_01ABC123DEF456",
    }


def _cursor(command: str, cwd: Path) -> dict[str, object]:
    return {
        "conversation_id": "668320d2",
        "generation_id": "490b90b7",
        "model": "gpt-5",
        "hook_event_name": "beforeShellExecution",
        "cursor_version": "2.0.77",
        "workspace_roots": [str(cwd)],
        "user_email": None,
        "transcript_path": None,
        "command": command,
        "cwd": str(cwd),
        "sandbox": False,
    }


@pytest.mark.parametrize(
    ("tool", "event"),
    [
        ("claude-code", _claude("ls -la && git status", Path("/tmp"))),
        ("cursor", _cursor("npm install express", Path("/tmp"))),
    ],
)
def test_an_unrelated_command_loads_nothing_beyond_the_version_command(
    tmp_path: Path, tool: str, event: dict[str, object]
) -> None:
    _, baseline = _modules(["--version"], None, tmp_path)
    out, modules = _modules(["hook", tool, "--boundary", "b.yaml"], event, tmp_path)
    assert out == ""
    assert modules - baseline == NO_OP_EXTRA
    assert sorted(m for m in modules if m.startswith("prover.")) == []
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_openshell_commands_that_apply_nothing_never_load_the_prover(tmp_path: Path) -> None:
    event = _claude("openshell sandbox list && openshell policy get dev", tmp_path)
    out, modules = _modules(["hook", "claude-code"], event, tmp_path)
    assert out == ""
    assert sorted(m for m in modules if m.startswith("prover.")) == []
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_a_check_without_network_rules_needs_no_z3(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(BOUNDARY, encoding="utf-8")
    (tmp_path / "c.yaml").write_text(CANDIDATE, encoding="utf-8")
    event = _claude("openshell policy set dev --policy c.yaml", tmp_path)
    out, modules = _modules(["hook", "claude-code", "--boundary", "b.yaml"], event, tmp_path)
    assert out == ""  # within_boundary: no objection, no output
    assert "prover.api" in modules
    assert "z3" not in modules
    assert sorted(m for m in modules if m.split(".")[0] in ("mcp", "starlette", "uvicorn")) == []

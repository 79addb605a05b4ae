"""The hook manifests and the agent skill in ``manifests/``, installed as a new user would."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import server
from server.cli import build_parser

ROOT = Path(server.__file__).resolve().parent.parent
MANIFESTS = ROOT / "manifests"
SKILL = MANIFESTS / "skills" / "policy-prover" / "SKILL.md"
BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only: [/usr, /etc]\n"
EXCEEDS = "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n  read_write: [/tmp]\n"


def _json(name: str) -> Any:
    return json.loads((MANIFESTS / name).read_text(encoding="utf-8"))


def _hook_args(command: str, tool: str) -> list[str]:
    command = command.partition(" || ")[0]  # Claude Code's fail-closed wrapper follows
    words = shlex.split(command)
    assert words[0] == "policy-prover"
    parsed = build_parser().parse_args(words[1:])
    assert (parsed.command, parsed.tool) == ("hook", tool)
    assert parsed.boundary == "policies/boundary.yaml"
    return words


def test_the_claude_code_snippet_runs_the_hook_before_bash() -> None:
    (entry,) = _json("claude-code-settings.json")["hooks"]["PreToolUse"]
    assert entry["matcher"] == "Bash"
    (hook,) = entry["hooks"]
    assert hook["type"] == "command"
    assert isinstance(hook["timeout"], int) and hook["timeout"] > 10  # seconds; checks take 10 s
    # Only the documented fields (type, command, timeout): an unknown one may make
    # Claude Code refuse the settings file.
    assert set(hook) == {"type", "command", "timeout"}
    _hook_args(hook["command"], "claude-code")


def test_the_cursor_hooks_file_runs_the_hook_before_shell_commands() -> None:
    document = _json("cursor-hooks.json")
    assert document["version"] == 1
    (hook,) = document["hooks"]["beforeShellExecution"]
    assert hook["failClosed"] is True  # a crash, timeout or bad output blocks the command
    _hook_args(hook["command"], "cursor")


def _claude_event(command: str, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": "abc123",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Apply the policy"},
        "tool_use_id": "toolu_01ABC123DEF456",
    }


def test_installed_into_a_project_the_claude_code_hook_denies_by_hand(tmp_path: Path) -> None:
    """Merge the snippet into a project's .claude/settings.json, then run its command
    through a shell exactly as Claude Code does, from a subdirectory of the project."""
    script = Path(sys.executable).with_name("policy-prover")
    bash = shutil.which("bash")
    if not script.exists() or bash is None:
        pytest.skip("needs the installed policy-prover script and bash")
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / "policies").mkdir()
    (project / "policies/boundary.yaml").write_text(BOUNDARY, encoding="utf-8")
    (project / "policies/wide.yaml").write_text(EXCEEDS, encoding="utf-8")
    settings = {"permissions": {"allow": ["Bash(ls:*)"]}}
    settings.update(_json("claude-code-settings.json"))
    (project / ".claude/settings.json").write_text(json.dumps(settings, indent=2))

    installed = json.loads((project / ".claude/settings.json").read_text())
    command = installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICY_PROVER_")}
    env["PATH"] = f"{script.parent}{os.pathsep}{env.get('PATH', '')}"
    env["CLAUDE_PROJECT_DIR"] = str(project)
    (project / "src").mkdir()
    event = _claude_event(
        "cd .. && openshell policy set dev --policy policies/wide.yaml", project / "src"
    )
    done = subprocess.run(
        [bash, "-c", command],
        input=json.dumps(event).encode(),
        capture_output=True,
        cwd=project / "src",
        env=env,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "result: exceeds_boundary" in answer["permissionDecisionReason"]
    assert "counterexample: filesystem write /tmp" in answer["permissionDecisionReason"]
    assert str(project / "policies/boundary.yaml") in answer["permissionDecisionReason"]


def _frontmatter(text: str) -> dict[str, Any]:
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "SKILL.md starts with a YAML frontmatter block"
    document = yaml.safe_load(match.group(1))
    assert isinstance(document, dict)
    return document


def test_the_skill_has_openshells_frontmatter_and_names_the_tools() -> None:
    text = SKILL.read_text(encoding="utf-8")
    front = _frontmatter(text)
    assert set(front) == {"name", "description"}
    assert front["name"] == SKILL.parent.name == "policy-prover"
    assert "Trigger keywords - " in front["description"]
    for tool in ("check_boundary", "assess_proposal", "explain_counterexample"):
        assert f"`{tool}(" in text
    for word in ("within_boundary", "exceeds_boundary", "unsupported", "inconclusive"):
        assert f"`{word}`" in text


def test_every_policy_prover_command_in_the_skill_parses() -> None:
    text = SKILL.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    commands = [
        line
        for block in blocks
        for line in block.replace("\\\n", " ").splitlines()
        if line.startswith("policy-prover ")
    ]
    assert len(commands) >= 4
    parser = build_parser()
    for command in commands:
        parsed = parser.parse_args(shlex.split(command)[1:])
        assert parsed.command in ("check", "assess", "explain")


def _run_claude_command(
    tmp_path: Path, path: str, command: str = "ls -la"
) -> subprocess.CompletedProcess[bytes]:
    """The manifest's command run through a shell as Claude Code runs it, with ``PATH``."""
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("needs sh")
    hook = _json("claude-code-settings.json")["hooks"]["PreToolUse"][0]["hooks"][0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICY_PROVER_")}
    env["PATH"] = path
    return subprocess.run(
        [sh, "-c", hook["command"]],
        input=json.dumps(_claude_event(command, tmp_path)).encode(),
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )


def test_the_claude_code_hook_blocks_when_policy_prover_is_missing(tmp_path: Path) -> None:
    # Without the wrapper the shell exits 127, which Claude Code treats as "go ahead".
    done = _run_claude_command(tmp_path, "/nonexistent")
    assert (done.returncode, done.stdout) == (2, b"")
    assert b"policy-prover hook failed (exit 127), so the command is blocked" in done.stderr


def test_the_claude_code_hook_blocks_when_policy_prover_crashes(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    crash = bin_dir / "policy-prover"
    crash.write_text("#!/bin/sh\necho '{\"partial'\nexit 1\n")
    crash.chmod(0o755)
    done = _run_claude_command(tmp_path, f"{bin_dir}:/usr/bin:/bin")
    assert done.returncode == 2
    assert b"policy-prover hook failed (exit 1)" in done.stderr


def test_the_wrapped_claude_code_hook_still_passes_and_denies(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("policy-prover")
    if not script.exists():
        pytest.skip("needs the installed policy-prover script")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies/boundary.yaml").write_text(BOUNDARY, encoding="utf-8")
    (tmp_path / "policies/wide.yaml").write_text(EXCEEDS, encoding="utf-8")
    path = f"{script.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    done = _run_claude_command(tmp_path, path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    done = _run_claude_command(
        tmp_path, path, "openshell policy set sb --policy policies/wide.yaml"
    )
    assert (done.returncode, done.stderr) == (0, b"")
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "result: exceeds_boundary" in answer["permissionDecisionReason"]

"""``policy-prover hook claude-code|cursor``: real hook events for every command form.

The events are written in each tool's documented shape: Claude Code's ``PreToolUse``
input (``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``,
``hook_event_name``, ``tool_name``, ``tool_input`` with ``command`` and ``description``,
``tool_use_id``) and Cursor's ``beforeShellExecution`` input (``conversation_id``,
``generation_id``, ``model``, ``hook_event_name``, ``cursor_version``,
``workspace_roots``, ``user_email``, ``transcript_path``, ``command``, ``cwd``,
``sandbox``). Most run in process; a few run the installed console script as the tools do.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import server
from server.cli import main
from server.hooks import verdicts

REPO_ROOT = Path(server.__file__).resolve().parent.parent
PROBE_MAIN = "import sys; from server.cli import main; sys.exit(main())"

BOUNDARY = """\
version: 1
filesystem_policy:
  read_only: [/usr, /etc, /lib]
  read_write: [/tmp, /workspace]
landlock:
  compatibility: hard_requirement
process:
  run_as_user: sandbox
  run_as_group: sandbox
network_policies:
  github_api:
    endpoints:
      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}
    binaries:
      - path: /usr/bin/curl
      - path: /usr/bin/gh
  pypi:
    endpoints:
      - {host: pypi.org, port: 443}
    binaries:
      - path: /usr/bin/python3
"""
WITHIN = """\
version: 1
filesystem_policy:
  read_only: [/usr, /etc]
  read_write: [/tmp]
landlock:
  compatibility: hard_requirement
process:
  run_as_user: sandbox
  run_as_group: sandbox
network_policies:
  github_api:
    endpoints:
      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}
    binaries:
      - path: /usr/bin/curl
"""
EXCEEDS = WITHIN.replace("access: read-only", "access: read-write")
INVALID = "version: 1\nmetadata: {}\n"
#: A current policy narrower than the boundary: GitHub only, no PyPI.
CURRENT = WITHIN


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with its policies, as a user would lay it out."""
    policies = tmp_path / "policies"
    policies.mkdir()
    for name, text in {
        "boundary.yaml": BOUNDARY,
        "good.yaml": WITHIN,
        "bad.yaml": EXCEEDS,
        "invalid.yaml": INVALID,
        "current.yaml": CURRENT,
        "with space.yaml": EXCEEDS,
    }.items():
        (policies / name).write_text(text, encoding="utf-8")
    return tmp_path


def claude_event(command: str, cwd: Path | str, tool: str = "Bash") -> dict[str, Any]:
    tool_input: dict[str, Any] = {"command": command, "description": "Apply the sandbox policy"}
    if tool != "Bash":
        tool_input = {"file_path": f"{cwd}/notes.md", "content": command}
    return {
        "session_id": "abc123",
        "transcript_path": "/home/user/.claude/projects/p/00893aaf.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC123DEF456",
    }


def cursor_event(command: str, cwd: Path | str) -> dict[str, Any]:
    return {
        "conversation_id": "668320d2-2fd8-4888-b33c-2a466fec86e7",
        "generation_id": "490b90b7-a2ce-4c2c-bb76-cb77b125df2f",
        "model": "claude-sonnet-4-5",
        "hook_event_name": "beforeShellExecution",
        "cursor_version": "2.0.77",
        "workspace_roots": [str(cwd)],
        "user_email": "user@example.com",
        "transcript_path": None,
        "command": command,
        "cwd": str(cwd),
        "sandbox": False,
    }


def run_hook(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    event: dict[str, Any] | bytes,
    *args: str,
    tool: str = "claude-code",
    boundary: Path | None = None,
) -> tuple[int, str]:
    data = event if isinstance(event, bytes) else json.dumps(event).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    for name in (
        "POLICY_PROVER_BOUNDARY",
        "POLICY_PROVER_CURRENT",
        "POLICY_PROVER_CREDENTIALS",
        "OPENSHELL_SANDBOX_POLICY",
        "CLAUDE_PROJECT_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    argv = ["hook", tool, *args]
    if boundary is not None:
        argv += ["--boundary", str(boundary)]
    status = main(argv)
    out, err = capsys.readouterr()
    assert err == ""
    return status, out


def denial(out: str) -> str:
    """The reason of a Claude Code denial; fails unless ``out`` is exactly one."""
    answer = json.loads(out)
    assert list(answer) == ["hookSpecificOutput"]
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    reason: str = specific["permissionDecisionReason"]
    return reason


# -- policy set, sandbox create, OPENSHELL_SANDBOX_POLICY --------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cd policies && openshell policy set my-sandbox --policy bad.yaml --wait",
        "openshell policy set my-sandbox --policy policies/bad.yaml",
        "openshell pol set --global --yes --policy=policies/bad.yaml",
        "/usr/local/bin/openshell -g prod --workspace team policy set sb "
        "--policy policies/bad.yaml",
        "openshell sandbox create --name dev --policy policies/bad.yaml -- claude",
        "openshell sb create --policy 'policies/with space.yaml' --from base -- bash",
        "OPENSHELL_SANDBOX_POLICY=policies/bad.yaml openshell sandbox create -- claude",
        "export OPENSHELL_SANDBOX_POLICY=./policies/bad.yaml; openshell sandbox create -- claude",
        "env OPENSHELL_SANDBOX_POLICY=policies/bad.yaml openshell sandbox create",
        "sudo -E openshell policy set sb --policy $PWD/policies/bad.yaml",
        "bash -c 'cd policies && openshell policy set sb --policy bad.yaml'",
        "(cd /tmp && ls) && openshell policy set sb --policy policies/bad.yaml 2>/dev/null",
        "git status; openshell policy set sb --policy policies/good.yaml && "
        "openshell policy set sb2 --policy policies/bad.yaml",
    ],
)
def test_a_policy_beyond_the_boundary_is_denied_with_the_counterexample_and_next_step(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, command: str
) -> None:
    monkeypatch.setenv("PWD", str(project))
    status, out = run_hook(
        monkeypatch,
        capsys,
        claude_event(command, project),
        boundary=project / "policies/boundary.yaml",
    )
    assert status == 0
    reason = denial(out)
    assert "result: exceeds_boundary" in reason
    assert "counterexample: network" in reason and "method=POST" in reason
    bad = next(
        str(project / "policies" / name)
        for name in ("bad.yaml", "with space.yaml")
        if str(project / "policies" / name) in reason
    )
    explain = shlex.join(
        ["policy-prover", "explain", bad, "--boundary", str(project / "policies/boundary.yaml")]
    )
    assert f"Next: Run `{explain}`" in reason


@pytest.mark.parametrize(
    "command",
    [
        "cd policies && openshell policy set my-sandbox --policy good.yaml",
        "openshell sandbox create --policy policies/good.yaml -- claude",
        "OPENSHELL_SANDBOX_POLICY=policies/good.yaml openshell sandbox create -- claude",
    ],
)
def test_a_policy_within_the_boundary_passes_untouched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, command: str
) -> None:
    status, out = run_hook(
        monkeypatch,
        capsys,
        claude_event(command, project),
        boundary=project / "policies/boundary.yaml",
    )
    assert (status, out) == (0, "")


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "pytest -q tests/",
        "git commit -m 'openshell policy set sb --policy policies/bad.yaml'",
        "grep -rn openshell docs/",
        "openshell sandbox list",
        "openshell policy get my-sandbox --full",
        "openshell policy set --help",
        "openshell policy update sb --add-endpoint evil.example:443 --dry-run",
        "openshell policy set sb --policy policies/bad.yaml --dry-run",
        "openshell policy update sb --remove-rule pypi --remove-endpoint pypi.org:443",
        "openshell policy update sb --add-deny 'api.github.com:443:DELETE:/**'",
        "echo OPENSHELL_SANDBOX_POLICY is documented",
        "man openshell",
        "ssh build-host openshell sandbox list",
        "echo openshell policy set sb --policy policies/bad.yaml",
    ],
)
def test_commands_that_apply_no_policy_pass_untouched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, command: str
) -> None:
    status, out = run_hook(monkeypatch, capsys, claude_event(command, project))
    assert (status, out) == (0, "")


def test_other_tools_pass_untouched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    event = claude_event(
        "openshell policy set sb --policy policies/bad.yaml", project, tool="Write"
    )
    assert run_hook(monkeypatch, capsys, event) == (0, "")


def test_the_boundary_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    event = json.dumps(claude_event("openshell policy set sb --policy policies/bad.yaml", project))
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(event.encode()), encoding="utf-8")
    )
    monkeypatch.setenv("POLICY_PROVER_BOUNDARY", str(project / "policies/boundary.yaml"))
    assert main(["hook", "claude-code"]) == 0
    assert "result: exceeds_boundary" in denial(capsys.readouterr().out)


def test_a_relative_boundary_starts_at_the_project_root(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    project: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # The tools may start the hook anywhere; the project root is CLAUDE_PROJECT_DIR for
    # Claude Code and the first workspace root of a Cursor event.
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    boundary = str(project / "policies/boundary.yaml")
    command = "openshell policy set sb --policy policies/bad.yaml"
    event = cursor_event(command, project)
    status, out = run_hook(
        monkeypatch, capsys, event, "--boundary", "policies/boundary.yaml", tool="cursor"
    )
    assert status == 0
    assert f"within the boundary {boundary}." in json.loads(out)["agent_message"]
    data = json.dumps(claude_event(command, project)).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("POLICY_PROVER_BOUNDARY", "policies/boundary.yaml")
    assert main(["hook", "claude-code"]) == 0
    assert f"within the boundary {boundary}." in denial(capsys.readouterr().out)


# -- fail closed ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "openshell policy set sb --policy policies/missing.yaml",
            "cannot read the policy file {project}/policies/missing.yaml: cannot open",
        ),
        ("openshell policy set sb --policy policies/invalid.yaml", "result: error"),
        (
            "openshell policy set sb --policy $(ls policies/*.yaml | head -1)",
            "cannot tell which file",
        ),
        ("openshell policy set sb --policy $UNSET_POLICY_DIR/bad.yaml", "cannot tell which file"),
        (
            "openshell policy set sb --policy 'policies/bad.yaml",
            "cannot parse this command line, which mentions openshell",
        ),
        (
            "openshell sandbox create -- claude",
            "no --policy and no OPENSHELL_SANDBOX_POLICY",
        ),
        (
            "cat > policies/new.yaml <<'EOF'\nversion: 1\nEOF\n"
            "openshell policy set sb --policy policies/new.yaml",
            "this command line writes {project}/policies/new.yaml and then applies it",
        ),
        (
            "cp policies/good.yaml /tmp/ && openshell policy set sb --policy /tmp/good.yaml",
            "this command line writes /tmp/good.yaml",
        ),
        (
            "cd - && openshell policy set sb --policy bad.yaml",
            "cannot tell which file `bad.yaml` names",
        ),
        (
            # A command substitution runs its commands: they are checked in turn.
            "X=$(openshell policy set sb --policy policies/bad.yaml)",
            "blocked `openshell policy set`: the policy {project}/policies/bad.yaml",
        ),
        (
            "ls policies/good.yaml | xargs -n1 openshell policy set sb --policy",
            # xargs appends its input: the policy file is only known at run time.
            "cannot tell which file `(a value only known at run time)` names",
        ),
        (
            r"find policies -name good.yaml -exec openshell policy set sb --policy {} \;",
            "cannot tell which file `(a value only known at run time)` names",
        ),
    ],
    ids=[
        "missing-file",
        "invalid-policy",
        "command-substitution",
        "unset-variable",
        "unterminated-quote",
        "create-without-policy",
        "heredoc-writes-the-file",
        "cp-writes-the-file",
        "unknown-directory",
        "openshell-in-substitution",
        "xargs",
        "find-exec",
    ],
)
def test_what_cannot_be_checked_is_denied_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    project: Path,
    command: str,
    expected: str,
) -> None:
    status, out = run_hook(
        monkeypatch,
        capsys,
        claude_event(command, project),
        boundary=project / "policies/boundary.yaml",
    )
    assert status == 0
    assert expected.format(project=project) in denial(out)


def test_a_missing_boundary_denies(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    event = claude_event("openshell policy set sb --policy policies/good.yaml", project)
    reason = denial(run_hook(monkeypatch, capsys, event)[1])
    assert "no boundary policy is configured" in reason and "POLICY_PROVER_BOUNDARY" in reason
    event = claude_event("openshell policy set sb --policy policies/good.yaml", project)
    reason = denial(run_hook(monkeypatch, capsys, event, boundary=project / "nowhere.yaml")[1])
    assert f"cannot read the boundary policy {project}/nowhere.yaml" in reason


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"not json", "the hook event is not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (
            json.dumps(
                {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}
            ).encode(),
            "no tool_input.command string",
        ),
    ],
)
def test_an_unreadable_event_denies(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data: bytes, expected: str
) -> None:
    status, out = run_hook(monkeypatch, capsys, data)
    assert status == 0
    assert expected in denial(out)


def test_an_internal_failure_denies(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(verdicts, "_check_file", broken)
    event = claude_event("openshell policy set sb --policy policies/good.yaml", project)
    reason = denial(
        run_hook(monkeypatch, capsys, event, boundary=project / "policies/boundary.yaml")[1]
    )
    assert (
        "internal error while checking `openshell policy set`: RuntimeError: solver exploded"
        in reason
    )


# -- policy update ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "openshell policy update sb --add-endpoint api.github.com:443:read-only:rest:enforce "
        "--binary /usr/bin/curl",
        "openshell policy update sb --add-allow 'api.github.com:443:GET:/repos/**'",
        "openshell policy update sb --add-endpoint pypi.org:443 --binary /usr/bin/python3 --wait",
    ],
)
def test_an_update_within_the_boundary_with_nothing_to_review_passes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, command: str
) -> None:
    status, out = run_hook(
        monkeypatch,
        capsys,
        claude_event(command, project),
        boundary=project / "policies/boundary.yaml",
    )
    assert (status, out) == (0, "")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "openshell policy update sb --add-endpoint evil.example:443 --binary /usr/bin/curl",
            [
                "(--add-endpoint for rule 'allow_evil_example_443'): the access it adds is not "
                "proven within the boundary",
                "so the addition was checked on its own: "
                '{"endpoints":[{"host":"evil.example","port":443}],'
                '"binaries":[{"path":"/usr/bin/curl"}]}',
                "result: exceeds_boundary",
                "host=evil.example:443",
                "Next: assess the change first (MCP tool assess_proposal, or `policy-prover "
                "assess`)",
            ],
        ),
        (
            # Merged into the boundary, `full` would fold into its read-only GitHub rule and
            # vanish; the sandbox's real policy may have no such rule, so the rule is checked
            # on its own and its `full` access is caught.
            "openshell policy update sb --add-endpoint api.github.com:443:full:rest:enforce "
            "--binary /usr/bin/curl",
            ["result: exceeds_boundary", "method=POST"],
        ),
        (
            "openshell policy update sb --add-allow 'api.github.com:443:post:/repos/**'",
            [
                "(--add-allow for api.github.com:443)",
                "result: exceeds_boundary",
                "method=POST",
                '"binaries":[{"path":"/usr/bin/curl"},{"path":"/usr/bin/gh"}]',
            ],
        ),
        (
            "openshell pol update sb --rule-name meta "
            "--add-endpoint=169.254.169.254:80:full:rest:enforce --binary /usr/bin/curl",
            [
                "(--add-endpoint for rule 'meta')",
                "finding [link_local_reach]",
                "assess it (MCP tool assess_proposal with it as the proposal, or "
                "`policy-prover assess --current",
            ],
        ),
        (
            "openshell policy update sb --add-endpoint 169.254.169.254:80::rest:enforce",
            ["The gateway would refuse it: candidate invalid"],
        ),
        (
            "openshell policy update sb --add-endpoint api.github.com:443:write-ish",
            ["--add-endpoint access segment must be one of read-only, read-write, or full"],
        ),
        (
            "openshell policy update sb --add-allow 'gitlab.com:443:GET:/**'",
            ["neither the boundary nor this command has an endpoint gitlab.com:443"],
        ),
    ],
    ids=[
        "new-host",
        "full-that-folding-would-hide",
        "add-allow-post",
        "metadata",
        "no-access",
        "bad-spec",
        "add-allow-unknown",
    ],
)
def test_an_update_that_exceeds_or_needs_review_is_denied(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    project: Path,
    command: str,
    expected: list[str],
) -> None:
    status, out = run_hook(
        monkeypatch,
        capsys,
        claude_event(command, project),
        boundary=project / "policies/boundary.yaml",
    )
    assert status == 0
    reason = denial(out)
    for text in expected:
        assert text in reason


def test_an_update_is_assessed_against_the_current_policy_when_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    current = str(project / "policies/current.yaml")
    boundary = project / "policies/boundary.yaml"

    def hook(command: str, *args: str) -> tuple[int, str]:
        event = claude_event(command, project)
        return run_hook(monkeypatch, capsys, event, "--current", current, *args, boundary=boundary)

    # Within the boundary; against the narrower current policy it adds reach, which the
    # assessment reports (adds_access) without making it a review item.
    assert hook(
        "openshell policy update sb --add-endpoint pypi.org:443 --binary /usr/bin/python3"
    ) == (
        0,
        "",
    )
    # The current policy has a read-only GitHub rule for curl: the gateway folds `full`
    # into it and keeps read-only, so the exact merge stays within the boundary.
    command = (
        "openshell policy update sb --add-endpoint api.github.com:443:full:rest:enforce "
        "--binary /usr/bin/curl"
    )
    assert hook(command) == (0, "")
    # A chained update: the --add-allow targets the endpoint the --add-endpoint extends.
    command = (
        "openshell policy update sb --add-endpoint api.github.com:443:read-only:rest:enforce "
        "--binary /usr/bin/gh --add-allow 'api.github.com:443:PUT:/repos/**'"
    )
    reason = denial(hook(command)[1])
    assert f"against current policy {current} and boundary" in reason
    assert "(--add-allow for api.github.com:443)" in reason and "method=PUT" in reason
    assert "Boundary:     exceeds_boundary" in reason
    # The current policy decides which endpoint --add-allow extends, and whether it can.
    reason = denial(hook("openshell policy update sb --add-allow 'pypi.org:443:GET:/simple/**'")[1])
    assert f"{current} has no endpoint pypi.org:443 to add rules to" in reason
    current = str(boundary)
    reason = denial(hook("openshell policy update sb --add-allow 'pypi.org:443:GET:/simple/**'")[1])
    assert "has protocol 'none (L4)'; method/path rules need rest or websocket" in reason


def test_an_update_without_a_current_policy_reaches_every_binary_at_the_endpoint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    # GET on the read-only GitHub endpoint is within the boundary for curl and gh alike;
    # whatever REST endpoint the sandbox has at pypi.org:443, the L4 boundary covers it.
    for command in (
        "openshell policy update sb --add-allow 'api.github.com:443:GET:/repos/**'",
        "openshell policy update sb --add-allow 'pypi.org:443:GET:/simple/**'",
    ):
        event = claude_event(command, project)
        result = run_hook(monkeypatch, capsys, event, boundary=project / "policies/boundary.yaml")
        assert result == (0, "")


# -- Cursor --------------------------------------------------------------------------------


def test_cursor_denial_carries_the_permission_and_both_messages(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    event = cursor_event("cd policies && openshell policy set sb --policy bad.yaml", project)
    status, out = run_hook(
        monkeypatch, capsys, event, tool="cursor", boundary=project / "policies/boundary.yaml"
    )
    assert status == 0
    answer = json.loads(out)
    assert answer["permission"] == "deny"
    assert "result: exceeds_boundary" in answer["agent_message"]
    assert "policy-prover explain" in answer["agent_message"]
    assert answer["user_message"] == answer["agent_message"].split("\n")[0]
    assert answer["user_message"].startswith("policy-prover hook: blocked `openshell policy set`")
    assert (answer["userMessage"], answer["agentMessage"]) == (
        answer["user_message"],
        answer["agent_message"],
    )


@pytest.mark.parametrize(
    "command",
    ["npm install express", "openshell policy set sb --policy policies/good.yaml"],
)
def test_cursor_passes_what_is_proven_or_unrelated(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, command: str
) -> None:
    event = cursor_event(command, project)
    status, out = run_hook(
        monkeypatch, capsys, event, tool="cursor", boundary=project / "policies/boundary.yaml"
    )
    assert (status, out) == (0, "")


def test_cursor_falls_back_to_the_workspace_root_without_cwd(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    event = cursor_event(
        "openshell policy update sb --add-allow 'api.github.com:443:DELETE:/x'", project
    )
    event["cwd"] = ""
    event["command"] = "openshell policy set sb --policy policies/bad.yaml"
    status, out = run_hook(
        monkeypatch, capsys, event, tool="cursor", boundary=project / "policies/boundary.yaml"
    )
    assert status == 0
    assert json.loads(out)["permission"] == "deny"
    assert str(project / "policies/bad.yaml") in json.loads(out)["agent_message"]


def test_a_cursor_event_of_another_kind_passes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    event = cursor_event("openshell policy set sb --policy policies/bad.yaml", project)
    event["hook_event_name"] = "afterShellExecution"
    assert run_hook(monkeypatch, capsys, event, tool="cursor") == (0, "")


# -- as the tools run it ---------------------------------------------------------------------


def _console_script() -> str:
    script = Path(sys.executable).with_name("policy-prover")
    if not script.exists():
        pytest.skip("the policy-prover console script is not installed next to this python")
    return str(script)


def test_the_installed_command_answers_a_real_event(project: Path) -> None:
    event = claude_event("cd policies && openshell policy set sb --policy bad.yaml", project)
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICY_PROVER_")}
    env.pop("CLAUDE_PROJECT_DIR", None)
    env["POLICY_PROVER_BOUNDARY"] = "policies/boundary.yaml"  # relative to the hook's cwd
    done = subprocess.run(
        [_console_script(), "hook", "claude-code"],
        input=json.dumps(event).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    assert "result: exceeds_boundary" in denial(done.stdout.decode())
    unrelated = claude_event("ls -la", project)
    done = subprocess.run(
        [_console_script(), "hook", "cursor"],
        input=json.dumps(cursor_event(unrelated["tool_input"]["command"], project)).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_usage_error_blocks_with_exit_2(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE_MAIN, "hook", "windsurf"],
        input=b"{}",
        capture_output=True,
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        timeout=60,
    )
    assert done.returncode == 2
    assert b"invalid choice: 'windsurf'" in done.stderr

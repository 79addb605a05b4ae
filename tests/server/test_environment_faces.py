"""Environment evidence on every face: the CLI's ``--environment`` on check, assess and
explain, the ``environment`` command, the MCP tools' ``environment`` argument and the
server's default (``serve --environment``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from prover.environment import load_environment
from server.app import create_server
from server.cli import main
from server.environment_default import set_default_environment
from tests.prover.environment.test_document import STANDARD

pytestmark = pytest.mark.anyio

CANDIDATE = "version: 1\n"  # includes the image's working directory
BOUNDARY = "version: 1\nfilesystem_policy: {read_write: [/sandbox, /tmp]}\n"
PROPOSAL = json.dumps(
    {
        "rule_name": "gh",
        "rule": {
            "endpoints": [{"host": "api.github.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
)
DIGEST = load_environment(STANDARD).sha256
FACT = "the image's working directory is /sandbox"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "c.yaml").write_text(CANDIDATE)
    (tmp_path / "b.yaml").write_text(BOUNDARY)
    (tmp_path / "env.yaml").write_text(STANDARD)
    (tmp_path / "p.json").write_text(PROPOSAL)
    return tmp_path


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_check_without_and_with_evidence(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["check", str(files / "c.yaml"), "--boundary", str(files / "b.yaml")]
    code, out, _ = _run([*base, "-o", "json"], capsys)
    assert code == 3 and json.loads(out)["reason_code"] == "unresolved_workdir"
    assert "environment_sha256" not in json.loads(out)["receipt"]
    code, out, _ = _run([*base, "--environment", str(files / "env.yaml"), "-o", "json"], capsys)
    document = json.loads(out)
    assert code == 0 and document["result"] == "within_boundary"
    assert document["receipt"]["environment_sha256"] == DIGEST
    assert document["receipt"]["assumptions"] == [FACT]
    assert document["inputs"]["environment"] == str(files / "env.yaml")
    code, out, _ = _run([*base, "--environment", str(files / "env.yaml")], capsys)
    assert out.splitlines()[0] == "result: within_boundary"
    assert f"environment: sha256={DIGEST}" in out.splitlines()
    assert f"assumption: {FACT}" in out.splitlines()


def test_check_with_bad_evidence_is_an_error(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files / "bad.yaml").write_text("version: 1\nworkdir: relative\n")
    base = ["check", str(files / "c.yaml"), "--boundary", str(files / "b.yaml")]
    code, out, err = _run([*base, "--environment", str(files / "bad.yaml")], capsys)
    assert code == 2 and out == "" and "'workdir'" in err and "Traceback" not in err
    code, out, err = _run([*base, "--environment", str(files / "missing.yaml")], capsys)
    assert code == 2 and "cannot open" in err


def test_explain_uses_and_reports_the_evidence(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files / "c2.yaml").write_text(
        "version: 1\nfilesystem_policy: {read_write: [/sandbox/x, /etc]}\n"
        # hard_requirement: the fix keeps only /sandbox/x, which under best_effort would
        # turn Landlock off were it missing from the image (landlock.rs try_open_path)
        "landlock: {compatibility: hard_requirement}\n"
    )
    args = ["explain", str(files / "c2.yaml"), "--boundary", str(files / "b.yaml")]
    code, out, _ = _run([*args, "--environment", str(files / "env.yaml"), "-o", "json"], capsys)
    document = json.loads(out)
    assert code == 1 and document["result"]["result"] == "exceeds_boundary"
    assert document["inputs"]["environment_sha256"] == DIGEST
    assert document["fix_verified"] is True
    fixed = document["fixed_candidate"]
    assert "/sandbox/x" in fixed and "/etc" not in fixed  # the subdirectory stays
    code, out, _ = _run([*args, "--environment", str(files / "env.yaml")], capsys)
    assert f"environment: sha256={DIGEST}" in out


def test_assess_passes_the_evidence_to_both_checks(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["assess", "--current", str(files / "c.yaml"), "--proposal", str(files / "p.json")]
    args += ["--boundary", str(files / "b.yaml"), "-o", "json"]
    _, out, _ = _run(args, capsys)
    without = json.loads(out)["boundary"]
    # The new host exceeds whatever the working directory; the receipt has no evidence.
    assert without["result"] == "exceeds_boundary"
    assert without["receipt"].get("environment_sha256") is None
    _, out, _ = _run([*args, "--environment", str(files / "env.yaml")], capsys)
    document = json.loads(out)
    assert document["boundary"]["result"] == "exceeds_boundary"
    assert document["boundary"]["receipt"]["environment_sha256"] == DIGEST
    assert document["receipt"]["environment_sha256"] == DIGEST
    assert document["adds_access"] is True
    (files / "bad.yaml").write_text("version: 1\nusers: []\n")
    code, out, err = _run([*args[:-2], "--environment", str(files / "bad.yaml")], capsys)
    assert code == 2 and "--environment" in err and "users" in err


def test_environment_command_on_a_root_and_on_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "etc/passwd").write_text("root:x:0:0::/root:/bin/sh\nsandbox:x:1000:1000::/:/bin/sh\n")
    (root / "bin").symlink_to("usr/bin")
    out_file = tmp_path / "env.json"
    code, out, err = _run(
        [
            "environment",
            "--rootfs",
            str(root),
            "--workdir",
            "/sandbox",
            "--user",
            "sandbox",
            "-o",
            str(out_file),
        ],
        capsys,
    )
    assert code == 0 and out == "" and "symlinks" in err
    env = load_environment(out_file.read_text())
    assert env.symlinks == {"/bin": "usr/bin"} and env.users["sandbox"] == 1000
    code, out, err = _run(["environment", "--image", str(tmp_path / "nope.tar")], capsys)
    assert code == 2 and err.startswith("policy-prover: ") and "Traceback" not in err
    code, out, err = _run(["environment", "--rootfs", str(root), "--workdir", "x"], capsys)
    assert code == 2


async def _call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert result.is_error is False
    assert result.structured_content is not None
    return result.structured_content


async def test_mcp_tools_take_the_environment_argument() -> None:
    as_json = json.dumps(
        {
            "version": 1,
            "workdir": "/sandbox",
            "user": "sandbox",
            "users": {"root": 0, "sandbox": 1000},
        }
    )
    async with Client(create_server()) as client:
        plain = await _call(
            client, "check_boundary", {"candidate": CANDIDATE, "boundary": BOUNDARY}
        )
        assert plain["result"] == "unsupported" and "environment_sha256" not in plain["receipt"]
        for text in (STANDARD, as_json):
            args = {"candidate": CANDIDATE, "boundary": BOUNDARY, "environment": text}
            result = await client.call_tool("check_boundary", args)
            document = result.structured_content
            assert document is not None and document["result"] == "within_boundary"
            assert document["receipt"]["assumptions"] == [FACT]
            assert "assumption: " + FACT in result.content[0].text  # type: ignore[union-attr]
        bad = await _call(
            client,
            "check_boundary",
            {"candidate": CANDIDATE, "boundary": BOUNDARY, "environment": "version: 3"},
        )
        assert bad["result"] == "error" and "version" in bad["reason"]
        explained = await _call(
            client,
            "explain_counterexample",
            {"candidate": CANDIDATE, "boundary": BOUNDARY, "environment": STANDARD},
        )
        assert explained["result"] == "within_boundary"  # compact by default
        assert explained["inputs"]["environment_sha256"] == DIGEST
        assert explained["inputs"]["assumptions"] == [FACT]
        assessed = await _call(
            client,
            "assess_proposal",
            {
                "current": CANDIDATE,
                "proposal": PROPOSAL,
                "boundary": BOUNDARY,
                "environment": STANDARD,
            },
        )
        assert assessed["boundary"]["receipt"]["environment_sha256"] == DIGEST


async def test_the_server_default_applies_when_a_call_gives_none() -> None:
    set_default_environment(STANDARD)
    try:
        async with Client(create_server()) as client:
            args = {"candidate": CANDIDATE, "boundary": BOUNDARY}
            default = await _call(client, "check_boundary", args)
            assert default["result"] == "within_boundary"
            none = await _call(client, "check_boundary", {**args, "environment": ""})
            assert none["result"] == "unsupported"
    finally:
        set_default_environment(None)


def test_serve_refuses_a_bad_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.yaml").write_text("version: 1\nsymlinks: {a: b}\n")
    code, _, err = _run(["serve", "--environment", str(tmp_path / "bad.yaml")], capsys)
    assert code == 2 and "--environment" in err and "symlinks" in err

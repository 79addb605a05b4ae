"""``policy-prover demo`` and the bundled examples it runs."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

import server
from server import demo
from server.app import create_server
from server.examples import boundary_example, candidate_examples, examples

REPO_ROOT = str(Path(server.__file__).resolve().parent.parent)


def test_demo_starts_the_stdio_server_and_shows_real_results() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from server.cli import main; sys.exit(main(['demo']))"],
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
        capture_output=True,
        timeout=120,
    )
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    assert "connected to policy-prover" in out
    assert "- check_boundary: Check a policy against a boundary" in out
    for candidate in candidate_examples():
        assert f"check_boundary: {candidate.name} against boundary" in out
    for value in ("within_boundary", "exceeds_boundary", "unsupported", "error"):
        assert f"result: {value}" in out
    assert "receipt: candidate_sha256=" in out
    assert out.rstrip().endswith("demo finished: every tool answered")


@pytest.mark.anyio
async def test_every_tool_the_server_lists_has_demo_steps(anyio_backend: str) -> None:
    async with Client(create_server()) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names
    for name in names:
        assert demo.DEMO_STEPS[name](), name


@pytest.mark.anyio
async def test_a_tool_without_demo_steps_makes_the_demo_fail(
    monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    monkeypatch.setattr(demo, "DEMO_STEPS", {})
    out = io.StringIO()
    assert await demo.run_demo(out, create_server()) == 1
    assert "no demo steps for tool check_boundary" in out.getvalue()


@pytest.mark.anyio
async def test_a_result_different_from_an_example_expectation_makes_the_demo_fail(
    monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    wrong = [
        demo.DemoStep(
            "within example", demo.check_boundary_steps()[0].arguments, {"result": "error"}
        )
    ]
    monkeypatch.setattr(demo, "DEMO_STEPS", {"check_boundary": lambda: wrong})
    out = io.StringIO()
    assert await demo.run_demo(out, create_server()) == 1
    assert "expected {'result': 'error'}" in out.getvalue()


def test_examples_are_one_boundary_and_candidates_with_expectations() -> None:
    assert boundary_example().role == "boundary"
    candidates = candidate_examples()
    assert len(candidates) == len(examples()) - 1
    assert all(c.expect and "result" in c.expect for c in candidates)
    results = {c.expect["result"] for c in candidates if c.expect}
    assert {"within_boundary", "exceeds_boundary", "unsupported", "error"} <= results


def test_demo_server_parameters_pass_the_import_path_explicitly() -> None:
    parameters = demo.server_parameters()
    assert parameters.command == sys.executable
    assert parameters.args == ["-m", "server"]
    assert parameters.env is not None
    assert parameters.env["PYTHONPATH"].split(os.pathsep)[0] == REPO_ROOT

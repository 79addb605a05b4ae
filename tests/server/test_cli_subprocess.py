"""The command line as a real process: console script, start-up imports, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import server

REPO_ROOT = Path(server.__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
WITHIN = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n"
BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n    - /etc\n"

# A stand-in core that runs until cancelled (or forever, with IGNORE_CANCEL), so that the
# test controls exactly when the check is running.
SLOW_CORE = """
import os, sys, time
import prover.api
from prover.api import BoundaryCheck
from prover.results import CheckOutcome, ReasonCode, Receipt

def check_boundary(candidate, boundary, *, timeout_ms=10000, budget=None, **_):
    sys.stderr.write("started\\n"); sys.stderr.flush()
    while os.environ.get("IGNORE_CANCEL") or not budget.cancelled:
        time.sleep(0.005)
    outcome = CheckOutcome.inconclusive(ReasonCode.CANCELLED, "containment check was cancelled")
    receipt = Receipt(candidate_sha256=None, boundary_sha256=None, z3_version="x", elapsed_ms=0.0)
    return BoundaryCheck(outcome=outcome, receipt=receipt)

prover.api.check_boundary = check_boundary
from server.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    (tmp_path / "within.yaml").write_text(WITHIN, encoding="utf-8")
    (tmp_path / "boundary.yaml").write_text(BOUNDARY, encoding="utf-8")
    return tmp_path


def test_the_console_script_runs_check_with_the_reference_exit_code(policies: Path) -> None:
    script = Path(sys.executable).with_name("policy-prover")
    if not script.exists():
        pytest.skip("the policy-prover console script is not installed next to this interpreter")
    done = subprocess.run(
        [str(script), "check", "within.yaml", "--boundary", "boundary.yaml"],
        cwd=policies,
        env=ENV,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"result: within_boundary\n")


def test_check_does_not_import_the_mcp_stack(policies: Path) -> None:
    code = (
        "import sys\n"
        "from server.cli import main\n"
        "status = main(['check', 'within.yaml', '--boundary', 'boundary.yaml', '-o', 'json'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'mcp', 'mcp_types', 'starlette', 'uvicorn', 'httpx2', 'sse_starlette'})\n"
        "sys.stderr.write(repr(heavy))\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=policies, env=ENV, capture_output=True, timeout=60
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["result"] == "within_boundary"
    assert done.stderr.decode().strip() == "[]"


def test_python_m_server_accepts_the_serve_options() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server", "--help"], env=ENV, capture_output=True, timeout=60
    )
    assert done.returncode == 0
    assert b"--transport" in done.stdout and b"usage: policy-prover serve" in done.stdout


def _start_slow(policies: Path, *, ignore_cancel: bool) -> subprocess.Popen[bytes]:
    env = {**ENV, **({"IGNORE_CANCEL": "1"} if ignore_cancel else {})}
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SLOW_CORE,
            "check",
            "within.yaml",
            "--boundary",
            "boundary.yaml",
            "-o",
            "json",
        ],
        cwd=policies,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    assert process.stderr.readline() == b"started\n"
    return process


def test_a_sigint_cancels_a_running_check_and_still_prints_the_json_result(policies: Path) -> None:
    process = _start_slow(policies, ignore_cancel=False)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 130
    document = json.loads(out)
    assert (document["result"], document["reason_code"], document["exit_code"]) == (
        "inconclusive",
        "cancelled",
        130,
    )


def test_a_second_sigint_exits_130_at_once_even_if_the_check_does_not_stop(
    policies: Path,
) -> None:
    process = _start_slow(policies, ignore_cancel=True)
    process.send_signal(signal.SIGINT)
    time.sleep(0.2)
    assert process.poll() is None  # the first press only asked the check to stop
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 130
    assert out == b""

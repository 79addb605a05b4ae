"""Ctrl-C during ``check``: the first cancels the check (exit 130, JSON still printed)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from prover.api import BoundaryCheck
from prover.results import CheckOutcome, ReasonCode, Receipt
from prover.run.budget import Budget
from server.cli import main
from server.interrupt import call_cancellable


def slow_core(started: threading.Event, stopped: threading.Event) -> Any:
    """A stand-in for ``prover.api.check_boundary`` that runs until its budget stops it."""

    def check_boundary(
        candidate: str,
        boundary: str,
        *,
        timeout_ms: int = 10_000,
        budget: Budget | None = None,
        reference_semantics: bool = False,
    ) -> BoundaryCheck:
        assert budget is not None
        started.set()
        while not budget.cancelled and not budget.expired:
            time.sleep(0.002)
        stopped.set()
        outcome = (
            CheckOutcome.inconclusive(ReasonCode.CANCELLED, "containment check was cancelled")
            if budget.cancelled
            else CheckOutcome.inconclusive(ReasonCode.SOLVER_TIMEOUT, "solver timeout elapsed")
        )
        receipt = Receipt(
            candidate_sha256=None, boundary_sha256=None, z3_version="test", elapsed_ms=0.0
        )
        return BoundaryCheck(outcome=outcome, receipt=receipt)

    return check_boundary


def _interrupt_when(started: threading.Event) -> threading.Thread:
    def fire() -> None:
        if started.wait(10):
            os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    return thread


def test_first_sigint_cancels_the_check_and_json_is_still_printed_with_exit_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started, stopped = threading.Event(), threading.Event()
    monkeypatch.setattr("prover.api.check_boundary", slow_core(started, stopped))
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text("version: 1\n", encoding="utf-8")
    firing = _interrupt_when(started)
    code = main(["check", "c.yaml", "--boundary", "c.yaml", "-o", "json", "--timeout", "1m"])
    firing.join(5)
    document = json.loads(capsys.readouterr().out)
    assert code == 130
    assert stopped.is_set()
    assert (document["result"], document["reason_code"]) == ("inconclusive", "cancelled")
    assert document["exit_code"] == 130


def test_first_sigint_in_text_mode_prints_the_cancelled_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started, stopped = threading.Event(), threading.Event()
    monkeypatch.setattr("prover.api.check_boundary", slow_core(started, stopped))
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text("version: 1\n", encoding="utf-8")
    _interrupt_when(started)
    code = main(["check", "c.yaml", "--boundary", "c.yaml", "--timeout", "1m"])
    out = capsys.readouterr().out
    assert code == 130
    assert out.splitlines()[0] == "result: inconclusive"
    assert out.splitlines()[-1] == "reason: containment check was cancelled"


def test_the_previous_sigint_handler_is_restored_after_the_check() -> None:
    before = signal.getsignal(signal.SIGINT)
    assert call_cancellable(lambda: 42, lambda: None) == 42
    assert signal.getsignal(signal.SIGINT) is before


def test_an_exception_in_the_worker_reaches_the_caller() -> None:
    def boom() -> None:
        raise RuntimeError("worker failed")

    with pytest.raises(RuntimeError, match="worker failed"):
        call_cancellable(boom, lambda: None)


def test_off_the_main_thread_the_function_runs_directly() -> None:
    result: list[str] = []

    def body() -> None:
        result.append(call_cancellable(lambda: threading.current_thread().name, lambda: None))

    thread = threading.Thread(target=body, name="not-main")
    thread.start()
    thread.join(5)
    assert result == ["not-main"]

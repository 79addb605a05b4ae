"""Ctrl-C for long checks: the first SIGINT cancels the check, the second exits at once.

The check runs in a worker thread while the main thread waits in short joins, so the
SIGINT handler (which Python always runs in the main thread) gets control promptly. The
first press cancels the check's :class:`~prover.run.budget.Budget`, which interrupts Z3; the
check then returns ``inconclusive``/``cancelled`` and the command still prints its result
(exit 130). A second press does not wait for anything: exit 130 immediately.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

EXIT_INTERRUPTED = 130
_JOIN_SLICE_S = 0.05


def call_cancellable(func: Callable[[], T], cancel: Callable[[], None]) -> T:
    """Run ``func`` in a worker thread; SIGINT calls ``cancel`` once, then exits 130."""
    if threading.current_thread() is not threading.main_thread():
        return func()  # signal handlers can only be installed from the main thread

    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = func()
        except BaseException as exc:  # re-raised in the caller's thread below
            outcome["error"] = exc

    presses = 0

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            cancel()
        else:
            exit_now()

    worker = threading.Thread(target=work, name="policy-prover-check", daemon=True)
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(_JOIN_SLICE_S)
    finally:
        signal.signal(signal.SIGINT, previous)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def exit_now() -> None:
    """Leave the process with status 130 without waiting for worker threads."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(EXIT_INTERRUPTED)

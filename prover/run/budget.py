"""One deadline and one cancellation flag per check, shared by every stage of it.

Z3 runs in worker threads; a caller on another thread (the CLI's SIGINT handler, the async
runner on deadline or client cancellation) calls :meth:`Budget.cancel`. That sets a flag
every stage polls *and* interrupts every Z3 context registered with the budget. The flag
matters because a ``Context.interrupt()`` issued before ``Solver.check()`` starts is lost:
solvers must call :meth:`Budget.checkpoint` right before ``check()``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any

DEFAULT_TIMEOUT_MS = 10_000
#: The reference's reasons for a check stopped by cancellation or by its deadline.
CANCELLED_REASON = "containment check was cancelled"
TIMEOUT_REASON = "solver timeout elapsed"


class BudgetExhausted(Exception):
    """Raised inside a check when its deadline has passed or it was cancelled."""

    def __init__(self, cancelled: bool) -> None:
        super().__init__(CANCELLED_REASON if cancelled else TIMEOUT_REASON)
        self.cancelled = cancelled


class Budget:
    """The time budget and cancellation state of one check."""

    def __init__(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        self.timeout_ms = timeout_ms
        self.started = time.monotonic()
        self.deadline = self.started + timeout_ms / 1000.0
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._contexts: list[Any] = []
        #: The client the check runs for (see :mod:`prover.run.admission`); None: the only one.
        self.client: Hashable | None = None

    # -- queries -----------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    def remaining_ms(self) -> int:
        """Whole milliseconds left, at least 0."""
        return max(0, int((self.deadline - time.monotonic()) * 1000))

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000.0

    def checkpoint(self) -> None:
        """Raise :class:`BudgetExhausted` if the check must stop now."""
        if self._cancelled.is_set():
            raise BudgetExhausted(cancelled=True)
        if time.monotonic() >= self.deadline:
            raise BudgetExhausted(cancelled=False)

    # -- control -----------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the check from any thread: set the flag and interrupt live Z3 contexts."""
        self._cancelled.set()
        self.interrupt_solvers()

    def interrupt_solvers(self) -> None:
        with self._lock:
            contexts = list(self._contexts)
        for ctx in contexts:
            try:
                ctx.interrupt()
            except Exception:  # best effort: the worker also polls the cancel flag
                # z3's Python wrapper checks the context's last error code after
                # ``Z3_interrupt``; that code is shared with the thread being interrupted,
                # so the call can raise that thread's "canceled" error. The interrupt has
                # been delivered either way.
                pass

    @contextmanager
    def solver_context(self, ctx: Any) -> Iterator[Any]:
        """Register a ``z3.Context`` so that :meth:`cancel` can interrupt it."""
        with self._lock:
            self._contexts.append(ctx)
        try:
            if self._cancelled.is_set():
                ctx.interrupt()
            yield ctx
        finally:
            with self._lock:
                self._contexts.remove(ctx)

"""One Z3 context for the solves of one network check (both identity modes).

Making a ``z3.Context`` and disposing of it costs a couple of milliseconds, as much as a
whole small solve; a check that reaches Z3 in both identity modes used to pay it twice.
A :class:`SolverSession` is opened by the network check, handed down to each solve,
and closed when the check ends: the first solve makes the context, later solves of the
same check reuse it (each with its own solver and terms), and closing hands every Z3
object to the background disposal (:func:`prover.encode.logic.dispose_later`).

The solves of one session run one after another in the thread of the check, never at
once: a context is not safe to share between threads. This module never imports Z3, so
a check that never reaches the solver stays free of it.
"""

from __future__ import annotations

from types import TracebackType


class SolverSession:
    """The state :mod:`prover.encode.solver` keeps for one check (``None`` until the
    first solve), and the structural shortcut's indexes of the pair
    (:mod:`prover.checks.structural`), which both identity modes read."""

    def __init__(self) -> None:
        self.shared: object | None = None
        self.structural: object | None = None

    def close(self) -> None:
        """Dispose of the context and every Z3 object made in it; idempotent."""
        self.structural = None
        shared, self.shared = self.shared, None
        if shared is not None:
            from prover.encode.solver import close_shared

            close_shared(shared)

    def __enter__(self) -> SolverSession:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

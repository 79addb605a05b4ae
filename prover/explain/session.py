"""The boundary checks one explanation runs, under one shared deadline.

An explanation runs many checks (the first one, one or two per violation, the final
verification). They share the caller's :class:`~prover.run.budget.Budget`: cancelling it
(the CLI's Ctrl-C, an MCP client's cancellation, the runner's watchdog) interrupts
whichever check is running. Each enumeration step runs under a *step budget* that ends
earlier, so that the final verification always keeps a reserve of the time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from prover.api import check_boundary
from prover.environment import Environment
from prover.explain.document import Data, dump_text
from prover.results import CheckOutcome, ReasonCode, Receipt, Verdict
from prover.run.budget import Budget

#: Share of the whole time budget kept for the final verification.
RESERVE_SHARE = 0.25
#: Below this many milliseconds a step is not worth starting.
MIN_STEP_MS = 20


class StepBudget(Budget):
    """A budget with its own, earlier deadline that also obeys its parent.

    Cancelling the parent cancels this step: ``cancelled`` and ``checkpoint`` consult the
    parent, and every Z3 context is registered with both, so the parent's ``cancel`` (and
    its watchdog) interrupts the solver of the running step.
    """

    def __init__(self, parent: Budget, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.parent = parent

    @property
    def cancelled(self) -> bool:
        return self.parent.cancelled or super().cancelled

    def checkpoint(self) -> None:
        self.parent.checkpoint()
        super().checkpoint()

    @contextmanager
    def solver_context(self, ctx: Any) -> Iterator[Any]:
        with self.parent.solver_context(ctx), super().solver_context(ctx):
            yield ctx


@dataclass
class Session:
    """The inputs every stage needs, the shared budget and a count of checks run."""

    boundary_text: str | bytes
    budget: Budget
    reference_semantics: bool = False
    environment: str | bytes | Environment | None = None
    last_receipt: Receipt | None = None
    checks_run: int = 0
    time_ran_out: bool = False
    #: Fix ranking: which grant units one boundary entry grants (measure.inside_units).
    inside_cache: dict[Any, bool] = field(default_factory=dict)
    #: The caller's needs that both policies allow: every fix must keep them
    #: (``prover.explain.needs``).
    needs: list[Any] = field(default_factory=list)
    #: Every need the boundary allows that the candidate may grant (``needs`` is those
    #: the candidate is known to grant): the rest of a candidate set aside holds them.
    open_needs: list[Any] = field(default_factory=list)
    #: What the fix is proved to narrow, in words: the repaired candidate when the
    #: runtime refuses the original (``prover.explain.repair``).
    candidate_label: str = "the original candidate"
    _reserve_ms: int = field(init=False)

    def __post_init__(self) -> None:
        self._reserve_ms = int(self.budget.timeout_ms * RESERVE_SHARE)

    def step_time_left(self) -> bool:
        """Whether another enumeration step may start (records when it may not)."""
        if self.budget.cancelled or self.budget.remaining_ms() - self._reserve_ms < MIN_STEP_MS:
            self.time_ran_out = True
            return False
        return True

    def check_texts(
        self, candidate: str | bytes, boundary: str | bytes, *, final: bool = False
    ) -> CheckOutcome:
        """One boundary check; a step leaves the reserve untouched, a final check may use it."""
        if final:
            timeout = self.budget.remaining_ms()
        else:
            timeout = self.budget.remaining_ms() - self._reserve_ms
        if self.budget.cancelled:
            return CheckOutcome.stopped(cancelled=True)
        if timeout <= 0 or (not final and timeout < MIN_STEP_MS):
            self.time_ran_out = True
            return CheckOutcome.stopped(cancelled=False)
        self.checks_run += 1
        check = check_boundary(
            candidate,
            boundary,
            budget=StepBudget(self.budget, timeout),
            reference_semantics=self.reference_semantics,
            environment=self.environment,
        )
        self.last_receipt = check.receipt
        outcome = check.outcome
        if outcome.reason_code in (ReasonCode.SOLVER_TIMEOUT, ReasonCode.CANCELLED):
            self.time_ran_out = True
        return outcome

    def check_against_boundary(self, data: Data, *, final: bool = False) -> CheckOutcome:
        return self.check_texts(dump_text(data), self.boundary_text, final=final)

    def check_narrowing(self, fixed: Data, reference: Data, *, final: bool = False) -> CheckOutcome:
        """Is ``fixed`` within ``reference``? (the fix only narrows)."""
        return self.check_texts(dump_text(fixed), dump_text(reference), final=final)


def stopped_by_time(outcome: CheckOutcome) -> bool:
    return outcome.verdict is Verdict.INCONCLUSIVE and outcome.reason_code in (
        ReasonCode.SOLVER_TIMEOUT,
        ReasonCode.CANCELLED,
    )

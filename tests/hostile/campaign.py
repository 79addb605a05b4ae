"""The fuzzing campaign: one hypothesis run per target, counting every outcome.

Used by the fast slice in this directory (a few hundred examples) and by
``benchmarks/fuzz_inputs.py`` (the long run). A broken promise raises :class:`Finding`
from inside hypothesis, which shrinks the input and reports the smallest one.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from tests.hostile.oracles import (
    LOADER_DEADLINE_S,
    fuzz_assess,
    fuzz_check,
    fuzz_loader,
    fuzz_tool,
    tool_deadline_s,
)
from tests.hostile.strategies import (
    policy_pairs,
    proposal_inputs,
    raw_texts,
    structured_policies,
    tool_arguments,
)

#: Timeout of the checks the fuzzers run: small, so a slow mutant costs little.
FUZZ_TIMEOUT_MS = 1500
FUZZ_DEADLINE_S = FUZZ_TIMEOUT_MS / 1000.0


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    needs_client: bool = False


TARGETS: tuple[Target, ...] = (
    Target("loader_structured", "load_policy on mutated valid policies (YAML/JSON, str/bytes)"),
    Target("loader_raw", "load_policy on raw text, bytes, YAML fragments and parser bombs"),
    Target("check_boundary", "check_boundary on policy pairs with hostile sides"),
    Target("assess_proposal", "assess_proposal on mutated proposals, credentials, risks"),
    Target("mcp_tools", "every MCP tool's arguments through the in-memory client", True),
)


def target(name: str) -> Target:
    return next(t for t in TARGETS if t.name == name)


def _settings(examples: int, derandomize: bool) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        print_blob=True,
    )


#: An answer later than its deadline by more than this counts as late in the figures.
LATE_S = 1.0


@dataclass
class Tally:
    """Outcome counts of one target, its slowest input and its deadline overruns."""

    counts: Counter[str] = field(default_factory=Counter)
    slowest_s: float = 0.0
    slowest_outcome: str = ""
    slowest_input: Any = None
    max_overrun_s: float = 0.0
    late: int = 0

    @property
    def inputs(self) -> int:
        return sum(self.counts.values())

    def record(self, run: Callable[[], str], deadline_s: float, given: Any) -> None:
        started = time.monotonic()
        outcome = run()
        elapsed = time.monotonic() - started
        self.counts[outcome] += 1
        if elapsed > self.slowest_s:
            self.slowest_s, self.slowest_outcome, self.slowest_input = elapsed, outcome, given
        self.max_overrun_s = max(self.max_overrun_s, elapsed - deadline_s)
        self.late += elapsed - deadline_s > LATE_S


def _loader(strategy: st.SearchStrategy[Any], tally: Tally) -> Callable[[Any], None]:
    @given(strategy)
    def run(data: Any) -> None:
        tally.record(lambda: fuzz_loader(data), LOADER_DEADLINE_S, data)

    return run


def _body(name: str, tally: Tally, client: Any) -> Callable[..., None]:
    if name == "loader_structured":
        return _loader(st.one_of(structured_policies(), structured_policies(gentle=True)), tally)
    if name == "loader_raw":
        return _loader(raw_texts(), tally)
    if name == "check_boundary":

        @given(policy_pairs())
        def check(pair: tuple[Any, Any]) -> None:
            tally.record(
                lambda: fuzz_check(pair[0], pair[1], FUZZ_TIMEOUT_MS), FUZZ_DEADLINE_S, pair
            )

        return check
    if name == "assess_proposal":

        @given(proposal_inputs())
        def assess(arguments: dict[str, Any]) -> None:
            tally.record(
                lambda: fuzz_assess(arguments, FUZZ_TIMEOUT_MS), FUZZ_DEADLINE_S, arguments
            )

        return assess
    if name == "mcp_tools":
        call, schemas = client
        names = sorted(schemas)
        calls = st.sampled_from(names).flatmap(
            lambda tool: st.tuples(st.just(tool), tool_arguments(tool, schemas[tool]))
        )
        calls = st.one_of(calls, calls, calls, st.tuples(st.just("no_such_tool"), st.just({})))

        @given(calls)
        def tool(item: tuple[str, dict[str, Any]]) -> None:
            tally.record(lambda: fuzz_tool(call, *item), tool_deadline_s(item[1]), item)

        return tool
    raise KeyError(name)


@contextmanager
def _client(needed: bool, mode: str) -> Iterator[Any]:
    if not needed:
        yield None
        return
    from tests.hostile.mcp_caller import tool_caller

    with tool_caller(mode) as client:
        yield client


def run_target(
    name: str,
    examples: int,
    *,
    derandomize: bool = False,
    mode: str = "auto",
    seed: int | None = None,
    tally: Tally | None = None,
) -> Tally:
    """Run ``examples`` hypothesis examples against target ``name``; outcome counts.

    ``derandomize`` fixes the inputs (CI); ``seed`` picks a reproducible random run.
    Outcomes are added to ``tally`` when given, so they survive a finding.

    Raises the :class:`~tests.hostile.oracles.Finding` (shrunk) of the first broken
    promise.
    """
    tally = Tally() if tally is None else tally
    with _client(target(name).needs_client, mode) as client:
        body = _body(name, tally, client)
        if seed is not None:
            body = hypothesis_seed(seed)(body)
        _settings(examples, derandomize)(body)()
    return tally

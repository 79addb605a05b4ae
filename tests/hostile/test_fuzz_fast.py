"""The fast slice of the fuzzing campaign: a few hundred hostile inputs across every target.

Derandomised so that CI is reproducible; ``benchmarks/fuzz_inputs.py`` runs the same
targets with random seeds and 100,000 inputs, and the slow test below runs a few
thousand. A broken promise fails with hypothesis's shrunk input (see oracles.py).
"""

from __future__ import annotations

import pytest

from tests.hostile.campaign import TARGETS, run_target

FAST_EXAMPLES = {
    "loader_structured": 150,
    "loader_raw": 150,
    "check_boundary": 80,
    "assess_proposal": 60,
    "mcp_tools": 60,
}


@pytest.mark.parametrize("name", [t.name for t in TARGETS])
def test_hostile_inputs_never_crash_hang_or_pass_the_target(name: str) -> None:
    tally = run_target(name, FAST_EXAMPLES[name], derandomize=True)
    assert tally.inputs >= FAST_EXAMPLES[name]


def test_hostile_tool_arguments_over_json_rpc_framing_are_answered_cleanly() -> None:
    tally = run_target("mcp_tools", 40, derandomize=True, mode="legacy")
    assert tally.inputs >= 40


def test_the_fast_slice_reaches_past_the_loader() -> None:
    """Guards the fuzzers themselves: enough mutants must be valid to reach the checks."""
    loader = run_target("loader_structured", 150, derandomize=True).counts
    checks = run_target("check_boundary", 80, derandomize=True).counts
    assert loader["loaded"] >= 15
    decided = sum(n for label, n in checks.items() if not label.startswith("error"))
    assert decided >= 10


@pytest.mark.slow
@pytest.mark.parametrize("name", [t.name for t in TARGETS])
def test_thousands_of_random_hostile_inputs_never_crash_hang_or_pass(name: str) -> None:
    tally = run_target(name, 3_000)
    assert tally.inputs >= 3_000

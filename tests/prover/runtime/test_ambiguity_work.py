"""The gateway's endpoint-ambiguity check: bounded work, and the caller's deadline."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.run.budget import BudgetExhausted
from prover.runtime.ambiguity import CHECKPOINT_EVERY_PAIRS, _host_overlap, ambiguities
from prover.runtime.globs import host_tokens, languages_overlap


def _policy(hosts: list[str]) -> dict:
    return {
        "version": 1,
        "network_policies": {
            f"r{i}": {"endpoints": [{"host": host, "port": 443}], "binaries": [{"path": "/x"}]}
            for i, host in enumerate(hosts)
        },
    }


def test_the_callers_deadline_stops_a_long_comparison() -> None:
    """Found by probing: 400 wildcard endpoints took 1.5 s of a 1 s assessment."""
    policy = _policy([f"*.s{i}.example.com" for i in range(200)])
    seen: list[int] = []

    def checkpoint() -> None:
        seen.append(1)
        if len(seen) == 2:
            raise BudgetExhausted(cancelled=False)

    with pytest.raises(BudgetExhausted):
        ambiguities(policy, checkpoint)
    assert len(seen) == 2 and 200 * 199 // 2 > 2 * CHECKPOINT_EVERY_PAIRS


PIECES = st.sampled_from(["a", "b", ".", "*", "**"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(PIECES, min_size=1, max_size=5).map("".join),
    st.lists(PIECES, min_size=1, max_size=5).map("".join),
)
def test_the_literal_ends_shortcut_never_changes_the_answer(left: str, right: str) -> None:
    _host_overlap.cache_clear()
    expected = languages_overlap(host_tokens(left), host_tokens(right), ".")
    assert _host_overlap(left, right) is expected

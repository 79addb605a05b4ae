"""The package's re-exports load on first use (so ``prover.encode.overlap`` needs no Z3)."""

from __future__ import annotations

import pytest

import prover.encode
from prover.encode.network import PolicyTerms, policy_allows


def test_reexports_are_the_modules_names() -> None:
    assert prover.encode.PolicyTerms is PolicyTerms
    assert prover.encode.policy_allows is policy_allows
    assert set(prover.encode.__all__) >= {"PolicyTerms", "new_action", "GlobCompiler"}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = prover.encode.no_such_name  # type: ignore[attr-defined]

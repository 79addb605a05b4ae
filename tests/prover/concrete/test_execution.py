"""Process identity and Landlock settings of spec §6-§7."""

from __future__ import annotations

import pytest

from prover.concrete.execution import (
    IdentityChange,
    compare_identity,
    landlock_is_hard,
    landlock_weakened,
    process_identity_is_root,
    process_identity_supported,
)
from prover.policy.model import Filesystem, Policy


@pytest.mark.parametrize(
    ("value", "expected"),
    [("root", True), ("0", True), ("", False), ("sandbox", False), ("00", False), ("ROOT", False)],
)
def test_root_is_spelled_root_or_zero(value: str, expected: bool) -> None:
    assert process_identity_is_root(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[(v, True) for v in ("", "sandbox", "root", "0", "1", "1500", "+7", "0042")],
        *[(v, True) for v in ("4294967294",)],
        *[(v, False) for v in ("4294967295", "00", "-1", "nobody", " 1", "1 ", "١", "+", "1_0")],
    ],
)
def test_supported_identities_follow_the_reference(value: str, expected: bool) -> None:
    assert process_identity_supported(value) is expected


@pytest.mark.parametrize(
    ("boundary", "candidate", "expected"),
    [
        ("sandbox", "sandbox", IdentityChange.SAME),
        ("root", "0", IdentityChange.SAME),
        ("", "", IdentityChange.SAME),
        ("sandbox", "root", IdentityChange.ESCALATES_TO_ROOT),
        ("1500", "0", IdentityChange.ESCALATES_TO_ROOT),
        ("", "root", IdentityChange.UNRESOLVED),
        ("root", "sandbox", IdentityChange.UNRESOLVED),
        ("sandbox", "", IdentityChange.UNRESOLVED),
        ("", "sandbox", IdentityChange.UNRESOLVED),
        ("1500", "1600", IdentityChange.UNRESOLVED),
    ],
)
def test_identity_changes(boundary: str, candidate: str, expected: IdentityChange) -> None:
    assert compare_identity(boundary, candidate) is expected


def _landlock(value: str) -> Policy:
    return Policy(filesystem=Filesystem(False, (), ()), landlock_compatibility=value)  # type: ignore[arg-type]


def test_only_a_hard_boundary_with_a_best_effort_candidate_weakens_landlock() -> None:
    hard, soft = _landlock("hard_requirement"), _landlock("best_effort")
    assert landlock_is_hard(hard) and not landlock_is_hard(soft)
    assert landlock_weakened(hard, soft)
    assert not landlock_weakened(soft, hard)
    assert not landlock_weakened(hard, hard)
    assert not landlock_weakened(soft, soft)

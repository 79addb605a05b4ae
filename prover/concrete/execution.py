"""Process identity and Landlock settings (spec §6-§7), in one place.

These are configuration comparisons, not actions: the runtime either runs the sandbox
as the configured identity or not, and Landlock is either a hard requirement or best
effort. ``root`` and ``0`` are the same identity; an empty value means "not set" (the
image's default user may apply, so it is never assumed to be non-root).
"""

from __future__ import annotations

from enum import Enum

from prover.policy.model import Policy

ROOT_IDENTITIES: tuple[str, ...] = ("root", "0")
_MAX_ID = 4_294_967_294  # u32::MAX - 1; u32::MAX is not a usable id


class IdentityChange(Enum):
    """How a candidate's process identity field relates to the boundary's."""

    SAME = "same"
    ESCALATES_TO_ROOT = "escalates_to_root"
    UNRESOLVED = "unresolved"


def process_identity_is_root(value: str) -> bool:
    return value in ROOT_IDENTITIES


def process_identity_supported(value: str) -> bool:
    """Empty, ``sandbox``, ``root``, ``0`` or a decimal id in 1..=4294967294.

    The decimal form follows Rust's ``u32`` parsing: ASCII digits with an optional
    leading ``+`` (leading zeros allowed).
    """
    if value in ("", "sandbox", *ROOT_IDENTITIES):
        return True
    digits = value[1:] if value.startswith("+") else value
    if not digits or not all("0" <= c <= "9" for c in digits):
        return False
    return 1 <= int(digits) <= _MAX_ID


def compare_identity(boundary: str, candidate: str) -> IdentityChange:
    """Equal (or both root) is the same; a set non-root boundary with a root candidate
    escalates; every other change needs execution-environment evidence."""
    if boundary == candidate or (
        process_identity_is_root(boundary) and process_identity_is_root(candidate)
    ):
        return IdentityChange.SAME
    if boundary and not process_identity_is_root(boundary) and process_identity_is_root(candidate):
        return IdentityChange.ESCALATES_TO_ROOT
    return IdentityChange.UNRESOLVED


def landlock_is_hard(policy: Policy) -> bool:
    return policy.landlock_compatibility == "hard_requirement"


def landlock_weakened(boundary: Policy, candidate: Policy) -> bool:
    """The only Landlock exceed: a hard boundary and a best-effort candidate."""
    return landlock_is_hard(boundary) and not landlock_is_hard(candidate)

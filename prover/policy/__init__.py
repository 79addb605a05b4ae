"""Authored policies: strict loading, the closed schema, and normalisation.

The schema (pydantic) is imported when first asked for: a boundary check whose policies
the fast path reads never loads pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prover.policy.loader import load_policy, policy_sha256
from prover.policy.normalize import normalize

if TYPE_CHECKING:
    from prover.policy.schema import AuthoredPolicy, policy_json_schema

__all__ = ["AuthoredPolicy", "load_policy", "normalize", "policy_json_schema", "policy_sha256"]


def __getattr__(name: str) -> object:
    if name in ("AuthoredPolicy", "policy_json_schema"):
        from prover.policy import schema

        return getattr(schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

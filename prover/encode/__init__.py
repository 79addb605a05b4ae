"""Z3 encodings of the network domains (spec §9): globs, the symbolic action, IPs,
query classes and ``policy_allows``. Every term is built in an explicit ``z3.Context``.

The per-mode solver that uses them is :mod:`prover.encode.solver`. The names below are
loaded on first use, so that the Z3-free modules of this package (:mod:`.overlap`) can
be imported without importing Z3.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "GlobCompiler": "prover.encode.globs",
    "PolicyTerms": "prover.encode.network",
    "SymbolicAction": "prover.encode.action",
    "action_domain": "prover.encode.action",
    "decode_action": "prover.encode.action",
    "new_action": "prover.encode.action",
    "policy_allows": "prover.encode.network",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prover.encode' has no attribute {name!r}")
    return getattr(import_module(module), name)

"""Z3 encodings of the network domains (spec §9): globs, the symbolic action, IPs,
query classes and ``policy_allows``. Every term is built in an explicit ``z3.Context``.

The per-mode solver that uses them is :mod:`prover.network_solver`.
"""

from __future__ import annotations

from prover.encode.action import SymbolicAction, action_domain, decode_action, new_action
from prover.encode.globs import GlobCompiler
from prover.encode.network import PolicyTerms, policy_allows

__all__ = [
    "GlobCompiler",
    "PolicyTerms",
    "SymbolicAction",
    "action_domain",
    "decode_action",
    "new_action",
    "policy_allows",
]

"""The proposal risk check: what risky access does a proposed network rule add?

``assess_proposal`` merges the rule into the current policy as the reference gateway
does, runs the reachability model on both policies and reports only the new findings
(spec proposal-risk.md). ``render_text`` prints the result like the reference report.

The names below are imported when first asked for: the runtime's validator
(:mod:`prover.runtime.validation`) uses this package's endpoint helpers and ambiguity
check on every policy it loads, and must not pull in the whole assessment (pydantic).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prover.proposal.assess import assess_proposal
    from prover.proposal.assessment import ProposalAssessment, ProposalReceipt
    from prover.proposal.findings import Category, Finding, FindingPath
    from prover.proposal.report import exit_code, render_text

_HOMES = {
    "Category": "findings",
    "Finding": "findings",
    "FindingPath": "findings",
    "ProposalAssessment": "assessment",
    "ProposalReceipt": "assessment",
    "assess_proposal": "assess",
    "exit_code": "report",
    "render_text": "report",
}

__all__ = [
    "Category",
    "Finding",
    "FindingPath",
    "ProposalAssessment",
    "ProposalReceipt",
    "assess_proposal",
    "exit_code",
    "render_text",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"prover.proposal.{home}"), name)

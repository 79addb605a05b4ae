"""The proposal risk check: what risky access does a proposed network rule add?

``assess_proposal`` merges the rule into the current policy as the reference gateway
does, runs the reachability model on both policies and reports only the new findings
(spec proposal-risk.md). ``render_text`` prints the result like the reference report.
"""

from prover.proposal.assess import assess_proposal
from prover.proposal.assessment import ProposalAssessment, ProposalReceipt
from prover.proposal.findings import Category, Finding, FindingPath
from prover.proposal.report import exit_code, render_text

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

"""A blocked proposal, fixed: the narrowest change that the assessment proves acceptable.

When ``assess_proposal`` decides ``blocked``, two causes can be repaired in the proposed
rule itself:

* endpoints the gateway can never approve (an always-blocked host, ``localhost``, a
  metadata hostname; an always-blocked ``allowed_ips`` entry): they are dropped;
* the merged policy exceeds the boundary: ``explain`` (the boundary prover's verified
  fix, narrowing before deleting) fixes the merged policy, and the proposal's rule is
  read back from the fixed policy (its endpoints that the current policy does not
  already have, and the fixed binaries).

The narrowed rule is then assessed again, with every input as given: it is offered only
when that assessment is neither ``blocked`` nor ``invalid`` and, with a boundary, its
merged policy is proved ``within_boundary``. That re-assessment is the proof; nothing
here is trusted without it. What was dropped or narrowed is listed, each with why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from prover.environment import Environment
from prover.errors import ProverError
from prover.policy.reader import read_policy_data
from prover.proposal.admission import approval_blockers
from prover.proposal.assessment import ProposalAssessment
from prover.proposal.endpoint import Data, clean, clone, items
from prover.proposal.fixed import FixedProposal
from prover.run.budget import Budget, BudgetExhausted

#: What the re-assessment may decide for the narrowed proposal to be offered.
ACCEPTABLE = frozenset({"auto_approvable", "accepted", "needs_review"})


Reassess = Callable[[str], ProposalAssessment]


def _endpoint_name(endpoint: Data) -> str:
    port = endpoint.get("port") or ",".join(str(p) for p in items(endpoint, "ports"))
    return f"{endpoint.get('host') or '(no host)'}:{port}"


def _without_blocked(rule: Data, dropped: list[str]) -> Data:
    """The rule without the endpoints the gateway can never approve."""
    result = clone(rule)
    kept: list[Data] = []
    for endpoint in items(rule, "endpoints"):
        reasons = approval_blockers({"endpoints": [endpoint]})
        if not reasons:
            kept.append(endpoint)
            continue
        host_reasons = [r for r in reasons if "allowed_ips" not in r]
        if host_reasons:
            dropped.append(f"endpoint {_endpoint_name(endpoint)}: {host_reasons[0]}")
            continue
        narrowed = clone(endpoint)
        ips = [
            ip
            for ip in items(endpoint, "allowed_ips")
            if not approval_blockers({"endpoints": [{"allowed_ips": [ip]}]})
        ]
        removed = [ip for ip in items(endpoint, "allowed_ips") if ip not in ips]
        dropped.append(
            f"allowed_ips {', '.join(map(str, removed))} of {_endpoint_name(endpoint)}: "
            "always blocked (SSRF hardening), so the draft could never be approved"
        )
        if ips:
            narrowed["allowed_ips"] = ips
        else:
            narrowed.pop("allowed_ips", None)
        kept.append(narrowed)
    result["endpoints"] = kept
    return result


def _deduplicated(endpoint: Data) -> Data:
    """The endpoint with repeated allow or deny rules written once (a narrowing can make
    two rules equal)."""
    result = clone(endpoint)
    for key in ("rules", "deny_rules"):
        entries = items(result, key)
        if entries:
            unique: list[Any] = []
            for entry in entries:
                if entry not in unique:
                    unique.append(entry)
            result[key] = unique
    return result


def _from_fixed(
    fixed_text: str, target: str, current: Data, proposed: Data
) -> tuple[Data | None, str | None]:
    """The proposal's rule read back from the fixed merged policy: the target rule's
    endpoints the current policy's rule does not already have, and its binaries."""
    fixed = read_policy_data(fixed_text)
    rules = fixed.get("network_policies") if isinstance(fixed, dict) else None
    rule = rules.get(target) if isinstance(rules, dict) else None
    if not isinstance(rule, dict):
        return None, "the fix deletes the whole rule: nothing it adds is within the boundary"
    existing = (current.get("network_policies") or {}).get(target) or {}
    known = [clean(e) for e in items(existing, "endpoints")]
    endpoints = [_deduplicated(e) for e in items(rule, "endpoints") if clean(e) not in known]
    if not endpoints:
        return None, "the fix removes every endpoint the proposal adds"
    result = clone(proposed)
    result["endpoints"] = endpoints
    if "binaries" in rule:
        result["binaries"] = clone(rule["binaries"])
    return result, None


def fixed_proposal(
    assessment: ProposalAssessment,
    current: Data,
    boundary: str | bytes | None,
    budget: Budget,
    environment: Environment | None,
    reassess: Reassess,
) -> FixedProposal:
    """The narrowest acceptable proposal for a ``blocked`` assessment (see the module)."""
    try:
        return _fixed(assessment, current, boundary, budget, environment, reassess)
    except BudgetExhausted:
        return FixedProposal(found=False, reason="the time budget ran out before a fix")
    except ProverError as exc:
        return FixedProposal(found=False, reason=f"the narrowed proposal did not read: {exc}")


def _fixed(
    assessment: ProposalAssessment,
    current: Data,
    boundary: str | bytes | None,
    budget: Budget,
    environment: Environment | None,
    reassess: Reassess,
) -> FixedProposal:
    dropped: list[str] = []
    name = assessment.rule_name
    rule = _without_blocked(assessment.proposed_rule, dropped)
    if not items(rule, "endpoints"):
        return FixedProposal(
            found=False,
            dropped=dropped,
            reason="every endpoint of the rule is always blocked; no narrower rule remains",
        )
    latest = assessment
    if dropped:  # assessed again without them: what is left may pass already
        latest = reassess(json.dumps({"rule_name": name, "rule": rule}))
        if _acceptable(latest):
            return _found(name, rule, latest, dropped)
    exceeded = (latest.boundary or {}).get("result") == "exceeds_boundary"
    if exceeded and boundary is not None and latest.merged_policy:
        narrowed, why = _narrowed(latest, rule, current, boundary, budget, environment, dropped)
        if narrowed is None:
            return FixedProposal(found=False, dropped=dropped, reason=why)
        rule = narrowed
        latest = reassess(json.dumps({"rule_name": name, "rule": rule}))
    if _acceptable(latest):
        return _found(name, rule, latest, dropped)
    why = latest.decision_reason or latest.decision
    return FixedProposal(
        found=False,
        dropped=dropped,
        decision=latest.decision,
        reason=f"the narrowed proposal is still {latest.decision}: {why}",
    )


def _acceptable(assessment: ProposalAssessment) -> bool:
    document = assessment.boundary
    within = document is None or document.get("result") == "within_boundary"
    return assessment.decision in ACCEPTABLE and within


def _found(
    name: str, rule: Data, assessment: ProposalAssessment, dropped: list[str]
) -> FixedProposal:
    if assessment.adds_access is False:
        return FixedProposal(
            found=False,
            dropped=dropped,
            reason="what is left of the proposal adds no access: the current policy "
            "already allows it (adds_access: false)",
        )
    return FixedProposal(
        found=True,
        proposal={"rule_name": name, "rule": rule},
        decision=assessment.decision,
        dropped=dropped,
    )


def _narrowed(
    assessment: ProposalAssessment,
    rule: Data,
    current: Data,
    boundary: str | bytes,
    budget: Budget,
    environment: Environment | None,
    dropped: list[str],
) -> tuple[Data | None, str | None]:
    """The rule narrowed by the verified fix of its merged policy (``explain``)."""
    # Imported here: an assessment that is not blocked must not load the explainer.
    from prover.explain import explain

    assert assessment.merged_policy is not None
    explanation = explain(
        assessment.merged_policy, boundary, budget=budget, environment=environment
    )
    target = assessment.target_rule or assessment.rule_name
    prefix = f"network_policies.{target}"
    for violation in explanation.violations:
        if not any(g.path.startswith(prefix) for g in violation.granted_by):
            continue
        why = violation.description.rstrip(".")
        closest = violation.closest_boundary_rules[:1]
        if closest and closest[0].fails_on:
            details = "; ".join(m.detail for m in closest[0].fails_on)
            why += f"; the closest boundary entry {closest[0].path}: {details}"
        dropped.append(f"{why} (fix: {violation.fix_description})")
    if not explanation.fix_verified or explanation.fixed_candidate is None:
        return None, "no verified fix of the merged policy: " + (
            explanation.enumeration.stopped_because or explanation.summary
        )
    return _from_fixed(explanation.fixed_candidate, target, current, rule)

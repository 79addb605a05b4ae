"""``assess_proposal``: merge a proposed rule into the current policy and report what it adds.

Pipeline (spec §2–§5):

1. read every input (invalid input raises ``ProposalError`` / ``PolicyLoadError``);
2. mechanistic mode only: canonicalise the rule against the current policy (§2.2);
3. merge it into the base policy (the current policy without ``_provider_*`` rules),
   then re-attach the provider rules: the candidate (§2.3);
4. validate the candidate (§2.4): the policy loader, the gateway's semantic checks,
   endpoint ambiguity. Any failure is an ``application_error`` and the model is not run;
5. run the reachability model on the current policy and on the candidate with the same
   credentials and registry, keep the new paths, suppress (§3–§4);
6. security notes on the (canonical) proposed rule (§5), approval blockers, accepted risks;
7. beyond the reference: boundary checks of the candidate against the current policy
   (``adds_access``) and against an optional boundary policy (see ``boundary.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import yaml

from prover.environment import Environment, EnvironmentLoadError, load_environment
from prover.errors import PolicyLoadError, ProposalError
from prover.policy.loader import load_policy
from prover.policy.reader import read_policy_data
from prover.proposal.accepted import AcceptedRisks, apply_accepted_risks, load_accepted_risks
from prover.proposal.admission import approval_blockers, uninspected_credential_warnings
from prover.proposal.assessment import Mode, ProposalAssessment, ProposalReceipt, sha256_of
from prover.proposal.body import ProposedRule, parse_proposal
from prover.proposal.boundary import with_boundary_verdicts
from prover.proposal.canonical import CanonicalizationError, canonicalize
from prover.proposal.credentials import CredentialSet, load_credentials
from prover.proposal.decision import decided
from prover.proposal.delta import NO_NEW_FINDINGS, finding_delta, validation_result
from prover.proposal.endpoint import Data, clean, clone, is_provider_rule
from prover.proposal.findings import Finding
from prover.proposal.merge import MergeError, add_rule
from prover.proposal.notes import security_notes
from prover.proposal.reach import run_model
from prover.proposal.registry import load_registry
from prover.proposal.repair import fixed_proposal
from prover.run.budget import DEFAULT_TIMEOUT_MS, Budget
from prover.runtime.ambiguity import ambiguities
from prover.runtime.validation import policy_violations


class _NotApplicable(Exception):
    """The proposal cannot be applied; the message is the application error."""


def _one_line(message: str) -> str:
    return "; ".join(line.strip() for line in message.split("\n") if line.strip())


def authored_data(
    text: str | bytes, what: str, checkpoint: Callable[[], None] | None = None
) -> Data:
    """A policy text, loaded and checked by the policy loader, as clean authored data."""
    try:
        policy = load_policy(text, checkpoint, runtime=True)
    except PolicyLoadError as error:
        raise PolicyLoadError(f"{what}: {error.message}", error.path) from None
    return clean(policy.model_dump(mode="json", exclude_none=True, exclude_unset=True))


def _rules(policy: Data) -> dict[str, Data]:
    rules = policy.get("network_policies")
    return rules if isinstance(rules, dict) else {}


def _candidate(current: Data, rule_name: str, rule: Data) -> tuple[Data, str, list[str]]:
    rules = _rules(current)
    base = {key: clone(value) for key, value in rules.items() if not is_provider_rule(key)}
    try:
        target, warnings = add_rule(base, rule_name, rule)
    except MergeError as error:
        raise _NotApplicable(f"merge failed: {_one_line(str(error))}") from None
    merged: dict[str, Data] = {}
    for key, value in rules.items():
        merged[key] = clone(value) if is_provider_rule(key) else base[key]
    merged.update({key: value for key, value in base.items() if key not in merged})
    candidate = clone(current)
    candidate["network_policies"] = merged
    return candidate, target, warnings


def _policy_text(policy: Data, checkpoint: Callable[[], None] | None = None) -> str:
    """The candidate as YAML; JSON (also YAML) when PyYAML's YAML 1.1 plain scalars would
    read back differently under the policy reader's YAML 1.2 rules (e.g. ``1e3``)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(policy, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)
    try:
        if read_policy_data(text, checkpoint) == policy:
            return text
    except PolicyLoadError:
        pass
    return json.dumps(policy, indent=2, ensure_ascii=False) + "\n"


def _validate(candidate: Data, text: str, checkpoint: Callable[[], None] | None = None) -> None:
    try:
        # The runtime's validator runs below, as the gateway runs it on a merge.
        load_policy(text, checkpoint)
    except PolicyLoadError as error:
        raise _NotApplicable(f"candidate invalid: {_one_line(error.message)}") from None
    base = dict(candidate)
    base["network_policies"] = {
        k: v for k, v in _rules(candidate).items() if not is_provider_rule(k)
    }
    violations = policy_violations(base)
    if violations:
        message = "policy contains unsafe content: " + "; ".join(violations)
        raise _NotApplicable(f"candidate invalid: {_one_line(message)}")
    found = ambiguities(candidate, checkpoint)
    if found:
        message = "network endpoint ambiguity validation failed:\n" + "\n".join(found)
        raise _NotApplicable(f"candidate invalid: {_one_line(message)}")


def assess_proposal(
    current: str | bytes,
    proposal: str | bytes,
    *,
    credentials: str | bytes | None = None,
    mode: Mode = "agent_authored",
    accepted_risks: str | bytes | None = None,
    registry: str | bytes | None = None,
    boundary: str | bytes | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    budget: Budget | None = None,
    environment: str | bytes | None = None,
    fix: bool = True,
) -> ProposalAssessment:
    """Assess a proposed network rule against the current effective policy.

    When the decision is ``blocked`` (and ``fix``), ``fixed_proposal`` is the narrowest
    proposal that a second assessment proves acceptable, or why there is none (see
    :mod:`prover.proposal.repair`).

    ``current`` is policy text (YAML or JSON, ``_provider_*`` rules allowed: it is the
    effective policy). ``proposal`` is the agent API body or a bare ``{rule_name, rule}``.
    ``credentials`` is ``{credentials: [...]}`` or a list of ``{name, type, target_hosts}``;
    ``accepted_risks`` and ``registry`` are optional documents (see their modules).
    ``boundary`` is an optional policy text the merged policy must stay within. The
    boundary checks (``adds_access`` always, ``boundary`` when given) share one budget:
    ``budget`` if given (to cancel from another thread), else one of ``timeout_ms``.
    ``environment`` (evidence about the sandbox image) is used by both checks.

    Every input is read, and every stage runs, under that budget: when it runs out (or
    is cancelled) before the boundary checks, :class:`~prover.run.budget.BudgetExhausted`
    is raised, since no sound partial assessment exists; the boundary checks themselves
    answer ``inconclusive`` as usual.

    Raises ``ProposalError`` or ``PolicyLoadError`` for invalid input. A proposal that
    cannot be merged or yields an invalid candidate is *not* an exception: it is reported
    in ``application_error`` and the model is not run.
    """
    if mode not in ("agent_authored", "mechanistic"):
        raise ProposalError(f"mode must be agent_authored or mechanistic, got {mode!r}")
    budget = budget or Budget(timeout_ms)
    tick = budget.checkpoint
    credential_set = load_credentials(credentials, tick)
    risks = load_accepted_risks(accepted_risks, tick)
    binaries = load_registry(registry, tick)
    proposed = parse_proposal(proposal, tick)
    current_data = _both_read(current, boundary, tick)
    evidence = _environment(environment, tick)
    tick()
    receipt: dict[str, Any] = {
        "current_sha256": sha256_of(current),
        "proposal_sha256": sha256_of(proposal),
        "credentials_sha256": sha256_of(credentials),
        "accepted_risks_sha256": sha256_of(accepted_risks),
        "registry_sha256": sha256_of(registry),
        "mode": mode,
    }
    if evidence is not None:
        receipt["environment_sha256"] = evidence.sha256
    warnings = list(proposed.warnings)
    rule_name, rule = proposed.rule_name, proposed.rule
    application_error: str | None = None
    target: str | None = None
    merged_text: str | None = None
    delta: tuple[Finding, ...] = ()
    try:
        if mode == "mechanistic":
            try:
                rule_name, rule = canonicalize(_rules(current_data), rule_name, rule)
            except CanonicalizationError as error:
                raise _NotApplicable(f"candidate canonicalization failed: {error}") from None
        candidate, target, merge_warnings = _candidate(current_data, rule_name, rule)
        warnings.extend(merge_warnings)
        tick()
        merged_text = _policy_text(candidate, tick)
        _validate(candidate, merged_text, tick)
        receipt["merged_policy_sha256"] = sha256_of(merged_text)
        delta = finding_delta(
            run_model(current_data, credential_set, binaries, tick),
            run_model(candidate, credential_set, binaries, tick),
        )
        tick()
    except _NotApplicable as failure:
        application_error = str(failure)
        merged_text = None
        target = None
    assessment = _assemble(
        proposed,
        rule,
        target,
        merged_text,
        application_error,
        delta,
        warnings,
        credential_set,
        risks,
        receipt,
    )
    result = decided(with_boundary_verdicts(assessment, current, boundary, budget, evidence))
    if result.decision != "blocked" or not fix:
        return result

    def reassess(narrowed: str) -> ProposalAssessment:
        return assess_proposal(
            current,
            narrowed,
            credentials=credentials,
            mode=mode,
            accepted_risks=accepted_risks,
            registry=registry,
            boundary=boundary,
            budget=budget,
            environment=environment,
            fix=False,
        )

    repaired = fixed_proposal(result, current_data, boundary, budget, evidence, reassess)
    return result.model_copy(update={"fixed_proposal": repaired})


def _both_read(
    current: str | bytes, boundary: str | bytes | None, tick: Callable[[], None]
) -> Data:
    """The current policy's data, once both it and the boundary (if any) load; else one
    ``PolicyLoadError`` naming the problems of both (the runtime's refusals included)."""
    problems: list[PolicyLoadError] = []
    current_data: Data = {}
    for text, what in ((current, "current policy"), (boundary, "boundary policy")):
        if text is None:
            continue
        try:
            data = authored_data(text, what, tick)
        except PolicyLoadError as error:
            problems.append(error)
            continue
        if what == "current policy":
            current_data = data
    if problems:
        raise PolicyLoadError("; ".join(p.message for p in problems), problems[0].path)
    return current_data


def _environment(text: str | bytes | None, tick: Callable[[], None]) -> Environment | None:
    if text is None:
        return None
    try:
        return load_environment(text, tick)
    except EnvironmentLoadError as exc:
        detail = exc.message.removeprefix("invalid environment: ")
        raise EnvironmentLoadError(f"environment document is invalid: {detail}", exc.path) from None


def _assemble(
    proposed: ProposedRule,
    rule: Data,
    target: str | None,
    merged_text: str | None,
    application_error: str | None,
    delta: tuple[Finding, ...],
    warnings: list[str],
    credential_set: CredentialSet,
    risks: AcceptedRisks,
    receipt: dict[str, Any],
) -> ProposalAssessment:
    notes = security_notes(rule)
    blockers = approval_blockers(rule)
    if target is not None:
        warnings.extend(uninspected_credential_warnings(rule, target, credential_set))
    result = "" if application_error else validation_result(delta)
    empty = application_error is None and result == NO_NEW_FINDINGS
    findings = list(apply_accepted_risks(delta, risks))
    unaccepted = any(not finding.accepted for finding in findings)
    return ProposalAssessment(
        findings=findings,
        validation_result=result,
        security_notes=notes,
        auto_approvable=empty and not notes and not blockers,
        application_error=application_error,
        no_new_findings=empty,
        needs_review=bool(application_error or unaccepted or notes or blockers),
        approval_blockers=blockers,
        warnings=warnings,
        rule_name=proposed.rule_name,
        target_rule=target,
        proposed_rule=rule,
        merged_policy=merged_text,
        receipt=ProposalReceipt(**receipt),
    )

"""The boundary check: does the candidate allow anything beyond the boundary?

The stages run in the reference's precedence (spec §3). A definite exceed anywhere wins
over every deferred ``unsupported``; anything the model does not cover, any timeout and
any doubt end in ``unsupported`` or ``inconclusive``, never ``within_boundary``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING

from prover.checks.binary_paths import exact_binary_under_glob, exact_deny_under_glob
from prover.checks.execution import check_landlock, check_process
from prover.checks.filesystem import check_filesystem, workdir_problem
from prover.encode.session import SolverSession
from prover.policy.model import Policy, Rule
from prover.results import CheckOutcome, ReasonCode, Verdict
from prover.run.budget import Budget

if TYPE_CHECKING:
    from prover.environment.evidence import Evidence


def _same_but_names(candidate: Policy, boundary: Policy) -> bool:
    """The policies are equal but for their rules' display names (key and name), the
    equality shortcut; compared in place, without building renamed copies."""
    if len(candidate.rules) != len(boundary.rules) or any(
        getattr(candidate, name) != getattr(boundary, name) for name in _POLICY_FIELDS
    ):
        return False
    return all(
        mine.binaries == theirs.binaries and mine.endpoints == theirs.endpoints
        for mine, theirs in zip(candidate.rules, boundary.rules, strict=True)
    )


_POLICY_FIELDS = tuple(field.name for field in fields(Policy) if field.name != "rules")


def _check_network_mode(
    candidate: Policy,
    boundary: Policy,
    *,
    identity: bool,
    budget: Budget,
    session: SolverSession,
) -> CheckOutcome:
    """``check_network_mode``, imported only when the candidate has network rules.

    A candidate without rules allows no network action (default deny), so each mode is
    within, vacuously: the outcome ``check_network_mode``'s structural shortcut gives.
    Such pairs (the seed example) then never import the network checks and Z3, which
    cost a CLI cold start some 30 to 40 ms.
    """
    if not candidate.rules:
        return CheckOutcome.within(decided_by="structural")
    from prover.checks.network import check_network_mode

    return check_network_mode(
        candidate, boundary, identity=identity, budget=budget, session=session
    )


def known_identity(evidence: Evidence | None) -> Callable[[str, str], bool] | None:
    """Names of users and groups the environment evidence resolves to numbers."""
    if evidence is None:
        return None
    return lambda value, field: evidence.identity(value, field) is not None


def check_models(
    candidate: Policy,
    boundary: Policy,
    budget: Budget,
    evidence: Evidence | None = None,
    *,
    past_workdir: bool = False,
) -> CheckOutcome:
    """Every domain on two reference-model policies, in the reference's precedence.

    ``past_workdir`` (the extended analysis): an unresolved working directory does not
    stop the check at once; an exceed in a domain it cannot affect (process, Landlock,
    network) is still found and reported, since it holds whatever the directory is.
    """
    if evidence is not None:
        from prover.environment.apply import resolved_binaries, with_workdir

        candidate, boundary = with_workdir(candidate, evidence), with_workdir(boundary, evidence)
        resolved = resolved_binaries(candidate, evidence)
        if resolved is not None:
            # Within for the resolved binaries is within for the policy as written;
            # anything else is decided on the policy as written.
            outcome = check_models(resolved, boundary, budget, evidence)
            if outcome.verdict is Verdict.WITHIN:
                return outcome
    workdir = workdir_problem(candidate.filesystem, boundary.filesystem)
    if workdir is not None:
        unresolved = CheckOutcome.unsupported(ReasonCode.UNRESOLVED_WORKDIR, workdir)
        if past_workdir:
            for stage in (check_process, check_landlock):
                outcome = stage(candidate, boundary, evidence)
                if outcome is not None and outcome.verdict is Verdict.EXCEEDS:
                    return outcome
            outcome = check_network(candidate, boundary, budget, evidence)
            if outcome.verdict is Verdict.EXCEEDS:
                return outcome
        return unresolved

    deferred: list[CheckOutcome] = []
    for stage in (check_process, check_landlock):
        outcome = stage(candidate, boundary, evidence)
        if outcome is None:
            continue
        if outcome.verdict is Verdict.EXCEEDS:
            return outcome
        deferred.append(outcome)

    if _same_but_names(candidate, boundary):
        return deferred[0] if deferred else CheckOutcome.within(decided_by="equality")

    fs_outcome = check_filesystem(
        candidate.filesystem, boundary.filesystem, evidence, budget.checkpoint
    )
    if fs_outcome is not None:
        if fs_outcome.verdict is Verdict.EXCEEDS:
            return fs_outcome
        deferred.append(fs_outcome)

    outcome = check_network(candidate, boundary, budget, evidence)
    if outcome.verdict is not Verdict.WITHIN:
        return outcome
    if deferred:
        return deferred[0]
    return outcome


def check_network(
    candidate: Policy, boundary: Policy, budget: Budget, evidence: Evidence | None = None
) -> CheckOutcome:
    """Both network identity modes and the §9.7 symlink checks, in the reference's order.

    With ``evidence``, a §9.7 ambiguity disappears when every exact binary it concerns
    (the candidate's for rule 1, the boundary's denying ones for rule 2) names the
    executable at that very path: the runtime matches resolved executable paths.
    """
    decided_by: set[str] = set()
    with SolverSession() as session:  # both modes' solves share one Z3 context
        for identity in (False, True):
            budget.checkpoint()
            if identity:
                reason = exact_binary_under_glob(candidate, boundary)
                if reason is not None and not _exacts_are_themselves(candidate.rules, evidence):
                    return CheckOutcome.unsupported(ReasonCode.UNRESOLVED_BINARY_PATH, reason)
            outcome = _check_network_mode(
                candidate, boundary, identity=identity, budget=budget, session=session
            )
            if outcome.verdict is not Verdict.WITHIN:
                return outcome
            if outcome.decided_by:
                decided_by.add(outcome.decided_by)

    reason = exact_deny_under_glob(candidate, boundary)
    denying = tuple(r for r in boundary.rules if any(e.deny_rules for e in r.endpoints))
    if reason is not None and not _exacts_are_themselves(denying, evidence):
        return CheckOutcome.unsupported(ReasonCode.UNRESOLVED_BINARY_PATH, reason)
    return CheckOutcome.within(decided_by="+".join(sorted(decided_by)) or None)


def _exacts_are_themselves(rules: tuple[Rule, ...], evidence: Evidence | None) -> bool:
    """Whether the evidence shows every exact binary of ``rules`` to be no symlink."""
    if evidence is None:
        return False
    from prover.environment.apply import binary_is_itself

    exacts = {b for rule in rules for b in rule.binaries if "*" not in b}
    return all(binary_is_itself(b, evidence) for b in sorted(exacts))

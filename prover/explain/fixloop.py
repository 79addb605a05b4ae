"""All violations, not one: find a violation, fix it, re-check, repeat.

Each round takes the check's counterexample, locates the candidate entries that grant
it, builds fix options (narrowing first), and accepts the first option that (1) no longer
allows the counterexample, by the concrete evaluator, and (2) is proved within the
working candidate by the boundary check, i.e. only narrows. The re-check of the fixed
working candidate against the boundary yields the next violation. An ``unsupported``
result that the fixes can get past (process identities, paths or the workdir the prover
cannot compare) is handled the same way; any other stops the rounds, as do the time
budget and ``max_violations``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from prover.concrete.witness import enforced_witness, network_action, replays
from prover.explain.closest import closest_boundary_rules, network_candidates
from prover.explain.describe import counterexample_text
from prover.explain.document import (
    Data,
    Edit,
    Loaded,
    filesystem_key,
    get_at,
    load_document,
    tree_copy,
)
from prover.explain.hints import blocker_for
from prover.explain.locate import Grant, locate_grants, rule_by_key
from prover.explain.measure import InsideCache, grant_units, inside_units
from prover.explain.models import (
    Blocker,
    FixOp,
    GrantRef,
    GrantsKept,
    RejectedFix,
    Violation,
)
from prover.explain.needs import Need, dropped_reason, first_dropped
from prover.explain.network_fixes import delete_rules, network_options
from prover.explain.options import Option, Rejection
from prover.explain.origin import original_location
from prover.explain.session import Session, stopped_by_time
from prover.explain.setting_fixes import (
    PROCESS_FIELDS,
    filesystem_alignment,
    filesystem_options,
    landlock_option,
    process_alignment,
    process_option,
    workdir_alignment,
)
from prover.policy.model import NetworkAction
from prover.policy.paths import render_path
from prover.results import (
    CheckOutcome,
    FilesystemCounterexample,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
    ReasonCode,
    Verdict,
)
from prover.results.report import counterexample_json, counterexample_line

#: How many ``unsupported`` results the rounds may get past.
MAX_ALIGNMENTS = 3


@dataclass
class LoopResult:
    doc: Loaded
    outcome: CheckOutcome
    violations: list[Violation] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    stopped_because: str | None = None
    edits: list[Edit] = field(default_factory=list)
    exact_hosts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _section(data: Data, key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


class Reference(NamedTuple):
    """What a fix is proved to narrow: the candidate, adjusted where the prover cannot
    order the change (``phrase`` names the adjustment, ``note`` explains it)."""

    data: Data
    note: str | None
    phrase: str | None


def aligned_reference(
    reference: Data, fixed: Data, exact_hosts: Sequence[tuple[str, dict[str, Any]]] = ()
) -> Reference:
    """``reference`` with the fixed candidate's process identities, and each wildcard
    endpoint narrowed to an exact host added as that exact host.

    Identities are not ordered by the prover (any change other than to root is
    ``unsupported``), so the narrowing check compares everything else; the identity
    itself is then exactly the boundary's, which the boundary check proves. An exact
    host may reach private addresses that its wildcard cannot (and the boundary allows),
    so the wildcard's endpoint with the exact host is added to what the fix is compared
    with."""
    result: Data = tree_copy(reference)
    changed: list[str] = []
    fixed_process = _section(fixed, "process")
    ref_process = _section(result, "process")
    for name in PROCESS_FIELDS:
        if fixed_process.get(name) != ref_process.get(name):
            changed.append(f"process.{name}")
            section = result.setdefault("process", {})
            if name in fixed_process:
                section[name] = fixed_process[name]
            else:
                section.pop(name, None)
    hosts: list[str] = []
    rules = _section(result, "network_policies")
    for rule_key, endpoint in exact_hosts:
        rule = rules.get(rule_key)
        if not isinstance(rule, dict) or not isinstance(rule.get("endpoints"), list):
            continue
        if endpoint not in rule["endpoints"]:
            rule["endpoints"].append(tree_copy(endpoint))
            hosts.append(f"{endpoint.get('host')} in '{rule_key}'")
    notes: list[str] = []
    phrases: list[str] = []
    if changed:
        phrases.append("process identity set")
        notes.append(
            f"compared with the original candidate with {', '.join(changed)} set to the fixed "
            "value: the prover cannot order process identities, so the fix sets them to "
            "exactly the boundary's value, which the within-boundary check proves"
        )
    if hosts:
        phrases.append("exact host " + ", ".join(hosts) + " added beside its wildcard")
        notes.append(
            "compared with the original candidate plus the exact host "
            + ", ".join(hosts)
            + ": an exact host may also reach private destination addresses, which its "
            "wildcard cannot; the boundary allows them, as the within-boundary check proves"
        )
    if not notes:
        return Reference(result, None, None)
    return Reference(result, "; ".join(notes), " and ".join(phrases))


def _fixable(outcome: CheckOutcome) -> bool:
    return _alignment_kind(outcome) is not None


def _alignment_kind(outcome: CheckOutcome) -> str | None:
    if outcome.verdict is not Verdict.UNSUPPORTED:
        return None
    reason = outcome.reason or ""
    if outcome.reason_code is ReasonCode.UNSUPPORTED_POLICY_SHAPE and reason.startswith(
        "process run_as_"
    ):
        return "process"
    if outcome.reason_code is ReasonCode.UNRESOLVED_FILESYSTEM_PATH:
        return "filesystem"
    if outcome.reason_code is ReasonCode.UNRESOLVED_WORKDIR:
        return "workdir" if reason.startswith("candidate") else "filesystem"
    return None


def _alignment(outcome: CheckOutcome, doc: Loaded, boundary: Loaded) -> Option | None:
    kind = _alignment_kind(outcome)
    if kind == "process":
        return process_alignment(doc, boundary.policy)
    if kind == "filesystem":
        return filesystem_alignment(doc, boundary.policy)
    if kind == "workdir":
        return workdir_alignment(doc)
    return None


def _options(
    doc: Loaded, boundary: Loaded, cex: object, grants: list[Grant], needs: Sequence[Need] = ()
) -> tuple[list[Option], list[Rejection], Data | None]:
    """Options, rejections, and the document with the granting rules deleted outright."""
    if isinstance(cex, NetworkCounterexample):
        action = network_action(cex)
        candidates = network_candidates(boundary.policy, action)
        held = [n.action for n in needs if isinstance(n.action, NetworkAction)]
        options, rejected = network_options(doc, boundary, grants, candidates, action, held)
        return options, rejected, delete_rules(doc, grants)
    if isinstance(cex, FilesystemCounterexample):
        options = filesystem_options(doc, boundary.policy, grants, cex)
        return options, [], options[-1].data
    if isinstance(cex, ProcessCounterexample):
        return [process_option(doc, cex)], [], None
    if isinstance(cex, LandlockCounterexample):
        return [landlock_option(doc, cex)], [], None
    raise TypeError(f"unknown counterexample type {type(cex).__name__}")


def _units(data: Data) -> int | None:
    loaded = load_document(data)
    return None if loaded is None else grant_units(loaded.policy)


def _ranked(
    options: list[Option],
    boundary: Loaded,
    cex: object,
    rejected: list[Rejection],
    cache: InsideCache,
    needs: Sequence[Need] = (),
) -> list[Option]:
    """Options that still load, no longer allow the action and keep every need, keeping
    the most that the boundary grants first, then the most grant units; a narrowing that
    keeps no more than removing comes after removing."""
    usable: list[tuple[int, int, Option]] = []
    inside: dict[int, int] = {}
    for position, option in enumerate(options):
        loaded = load_document(option.data)
        if loaded is None:
            rejected.append(Rejection(option.description, "the edited policy would not be valid"))
            continue
        if replays(loaded.policy, boundary.policy, cex):
            rejected.append(
                Rejection(option.description, "another entry would still allow the action")
            )
            continue
        lost = first_dropped(loaded.policy, needs)
        if lost is not None:
            rejected.append(Rejection(option.description, dropped_reason(lost)))
            continue
        option.units = grant_units(loaded.policy)
        inside[position] = inside_units(loaded.policy, boundary.policy, cache)
        usable.append((option.units, position, option))
    removal = max((u for u, _, o in usable if o.kind == "remove"), default=-1)

    def order(item: tuple[int, int, Option]) -> tuple[int, bool, int, int]:
        units, position, option = item
        # A narrowing that keeps no more than removing is tried only after removing.
        demoted = option.kind == "narrow" and units <= removal
        return (-inside[position], demoted, -units, position)

    return [option for _, _, option in sorted(usable, key=order)]


@dataclass
class Step:
    violation: Violation
    doc: Loaded | None = None
    outcome: CheckOutcome | None = None
    edits: list[Edit] = field(default_factory=list)
    exact_hosts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _try(
    session: Session, doc: Loaded, option: Option
) -> tuple[Loaded | None, CheckOutcome | None, str | None]:
    """Prove the option narrows, then re-check it against the boundary."""
    reference = aligned_reference(doc.data, option.data, option.exact_hosts).data
    narrowing = session.check_narrowing(option.data, reference)
    if narrowing.reason_code is ReasonCode.UNRESOLVED_BINARY_PATH:
        return (
            None,
            narrowing,
            "the prover cannot compare the edited candidate with the original: a binary glob "
            "in one of them matches an exact binary of a rule on overlapping endpoints "
            "(symlink ambiguity); use exact binaries in the candidate to allow this narrowing",
        )
    if narrowing.verdict is not Verdict.WITHIN:
        detail = (
            counterexample_line(narrowing.counterexample)
            if narrowing.counterexample
            else (narrowing.reason or "")
        )
        return (
            None,
            narrowing,
            f"not proved to only narrow the candidate ({narrowing.verdict.value}: {detail})",
        )
    loaded = load_document(option.data)
    assert loaded is not None
    return loaded, session.check_against_boundary(option.data), None


_CANDIDATE_RULE = re.compile(r"candidate (?:policy )?rule '([^']*)'")


def _blames(outcome: CheckOutcome, option: Option) -> bool:
    """Whether an undecided re-check may be this option's doing. Only a reason about
    the candidate's own rules alone (an endpoint outside the model elsewhere in the
    candidate), naming none that the option edits, is not: it would meet every option
    alike, so it is no reason to prefer deleting over narrowing. Anything else (the
    boundary's endpoint selection, which a narrowing can newly reach) may be."""
    reason = outcome.reason or ""
    if not reason.startswith("candidate ") or "boundary policy" in reason:
        return True
    if "endpoint selection" in reason:
        return True
    named = set(_CANDIDATE_RULE.findall(reason))
    edited = {
        str(edit.location[1])
        for edit in option.edits
        if len(edit.location) > 1 and edit.location[0] == "network_policies"
    }
    return not named or bool(named & edited)


def fix_violation(
    session: Session,
    doc: Loaded,
    boundary: Loaded,
    cex: object,
    prior: Sequence[Edit] = (),
    original: Data | None = None,
) -> Step:
    """Fix one violation of ``doc``; paths are reported in the ``original`` candidate,
    which ``prior`` (the edits made so far) turned into ``doc``."""
    grants = locate_grants(doc, cex)
    options, rejected, deleted = _options(doc, boundary, cex, grants, session.needs)
    ranked = _ranked(options, boundary, cex, rejected, session.inside_cache, session.needs)
    before = grant_units(doc.policy)
    chosen: Option | None = None
    found: tuple[Loaded, CheckOutcome] | None = None
    for position, option in enumerate(ranked):
        if not session.step_time_left():
            break
        loaded, outcome, problem = _try(session, doc, option)
        if problem is not None:
            rejected.append(Rejection(option.description, problem))
            if outcome is not None and stopped_by_time(outcome):
                break
            continue
        assert outcome is not None
        last = position == len(ranked) - 1
        if (
            outcome.verdict in (Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE)
            and not stopped_by_time(outcome)
            and not _fixable(outcome)
            and not last
            and _blames(outcome, option)
        ):
            rejected.append(
                Rejection(
                    option.description,
                    f"the result would be {outcome.verdict.value}: {outcome.reason}",
                )
            )
            continue
        assert loaded is not None
        chosen, found = option, (loaded, outcome)
        break
    violation = _violation(
        doc, boundary, cex, grants, chosen, rejected, before, deleted, prior, original
    )
    if found is None:
        return Step(violation=violation)
    assert chosen is not None
    return Step(
        violation=violation,
        doc=found[0],
        outcome=found[1],
        edits=chosen.edits,
        exact_hosts=chosen.exact_hosts,
    )


def _violation(
    doc: Loaded,
    boundary: Loaded,
    cex: object,
    grants: list[Grant],
    chosen: Option | None,
    rejected: list[Rejection],
    before: int,
    deleted: Data | None,
    prior: Sequence[Edit] = (),
    original: Data | None = None,
) -> Violation:
    data = counterexample_json(cex)
    assert data is not None
    kept = None
    if chosen is not None:
        kept = GrantsKept(
            before=before,
            with_fix=chosen.units,
            with_rule_deleted=_units(deleted) if deleted is not None else None,
        )
    return Violation(
        counterexample=data,
        counterexample_line=counterexample_line(cex),
        description=counterexample_text(cex),
        granted_by=[_original_ref(g, prior, original) for g in grants],
        closest_boundary_rules=closest_boundary_rules(
            boundary.policy, cex, filesystem_key(boundary.data)
        ),
        fix=_original_ops(chosen.edits, prior) if chosen else [],
        fix_kind=chosen.kind if chosen else "none",
        fix_description=chosen.description if chosen else "no verified fix was found",
        grants_kept=kept,
        rejected_fixes=[RejectedFix(description=r.description, reason=r.reason) for r in rejected],
    )


def _original_ref(grant: Grant, prior: Sequence[Edit], original: Data | None) -> GrantRef:
    """The grant's reference with paths in the original candidate (before ``prior``):
    the same entry, or the original entry it was narrowed from (then its value as the
    original has it, and no deeper indices)."""
    if not prior:
        return grant.ref
    update: dict[str, Any] = {}
    location = original_location(grant.location, prior, nearest=True)
    if location is not None and location != grant.location:
        update["path"] = render_path(location)
        update["endpoint_index"] = (
            location[3] if grant.endpoint_index is not None and len(location) > 3 else None
        )
        update["allow_rule_index"] = (
            location[5] if grant.allow_rule_index is not None and len(location) > 5 else None
        )
        if original is not None:
            try:
                update["value"] = tree_copy(get_at(original, location))
            except (KeyError, IndexError, TypeError):  # the mapping found no such entry
                update.pop("path")
        if original_location(grant.location, prior) is None:
            update["summary"] = f"{grant.ref.summary}; in the copy an earlier fix narrowed"
    if grant.binary_location is not None:
        binary = original_location(grant.binary_location, prior)
        if binary is not None:
            update["binary_path"] = render_path(binary)
    return grant.ref.model_copy(update=update)


def _original_ops(edits: list[Edit], prior: Sequence[Edit]) -> list[FixOp]:
    """This violation's edits with paths in the original candidate where the entry
    existed there (an added entry keeps its path in the working copy)."""
    ops: list[FixOp] = []
    for position, edit in enumerate(edits):
        op = edit.as_fix_op()
        if edit.op != "add":
            location = original_location(edit.location, [*prior, *edits[:position]])
            if location is not None:
                op = op.model_copy(update={"path": render_path(location)})
        ops.append(op)
    return ops


def preferred_witness(doc: Loaded, boundary: Loaded, cex: object) -> object:
    """The counterexample, or the same action by a granting rule's binary with binary
    identity enforced when that is a violation too (it names who is granted)."""
    if not isinstance(cex, NetworkCounterexample) or cex.binary_identity_required:
        return cex
    binaries: list[str] = []
    for grant in locate_grants(doc, cex):
        if grant.rule_key is None:
            continue
        for binary in rule_by_key(doc, grant.rule_key).binaries:
            if binary not in binaries:
                binaries.append(binary)
    named = enforced_witness(doc.policy, boundary.policy, cex, binaries)
    return cex if named is None else named


def _lost_need(option: Option, needs: Sequence[Need]) -> Need | None:
    if not needs:
        return None
    loaded = load_document(option.data)
    return None if loaded is None else first_dropped(loaded.policy, needs)


def fix_all(
    session: Session,
    original: Loaded,
    boundary: Loaded,
    first: CheckOutcome,
    max_violations: int,
) -> LoopResult:
    """Fix every violation found, re-checking after each fix."""
    state = LoopResult(doc=original, outcome=first)
    alignments = 0
    while state.outcome.verdict is not Verdict.WITHIN:
        outcome = state.outcome
        if outcome.verdict is Verdict.EXCEEDS:
            if len(state.violations) >= max_violations:
                state.stopped_because = (
                    f"stopped after max_violations={max_violations}; more violations remain"
                )
                break
            cex = preferred_witness(state.doc, boundary, outcome.counterexample)
            step = fix_violation(session, state.doc, boundary, cex, state.edits, original.data)
            state.violations.append(step.violation)
            if step.doc is None or step.outcome is None or not step.edits:
                state.stopped_because = (
                    "the time budget ran out while fixing a violation; raise the timeout"
                    if session.time_ran_out or session.budget.expired or session.budget.cancelled
                    else _no_fix(len(state.violations), step.violation)
                )
                break
            state.doc, state.outcome = step.doc, step.outcome
            state.edits.extend(step.edits)
            state.exact_hosts.extend(step.exact_hosts)
            continue
        if not _align(session, state, boundary, alignments):
            break
        alignments += 1
    return state


def _no_fix(number: int, violation: Violation) -> str:
    """Why violation ``number`` has no fix: the needs, when they ruled options out."""
    held = [r.reason for r in violation.rejected_fixes if "need " in r.reason]
    if held:
        return (
            f"no verified fix for violation {number} keeps every need: each fix found would "
            f"drop one ({held[0]}); see its rejected_fixes"
        )
    return f"no verified fix was found for violation {number}"


def _align(session: Session, state: LoopResult, boundary: Loaded, done: int) -> bool:
    """Get past an ``unsupported`` result if a verified edit can; record it either way."""
    outcome = state.outcome
    blocker = blocker_for(outcome, state.doc.data, boundary.data)
    option = _alignment(outcome, state.doc, boundary) if done < MAX_ALIGNMENTS else None
    if stopped_by_time(outcome):
        state.blockers.append(blocker)
        state.stopped_because = "the time budget ran out; raise the timeout"
        return False
    if option is None or not session.step_time_left():
        state.blockers.append(blocker)
        state.stopped_because = (
            f"the partly fixed candidate is {outcome.verdict.value}: {outcome.reason}"
        )
        return False
    lost = _lost_need(option, session.needs)
    if lost is not None:
        state.blockers.append(blocker)
        state.stopped_because = (
            f"could not get past {outcome.reason_code}: {option.description}, but "
            f"{dropped_reason(lost)}"
        )
        return False
    loaded, next_outcome, problem = _try(session, state.doc, option)
    if problem is not None or loaded is None or next_outcome is None:
        state.blockers.append(blocker)
        state.stopped_because = f"could not get past {outcome.reason_code}: {problem}"
        return False
    blocker.fix = [e.as_fix_op() for e in option.edits]
    blocker.fix_description = option.description
    state.blockers.append(blocker)
    state.doc, state.outcome = loaded, next_outcome
    state.edits.extend(option.edits)
    return True

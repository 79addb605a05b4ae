"""``explain``: a plain explanation of a boundary-check result, with a verified fix.

The pipeline: read a prior result (if any) -> a fresh boundary check -> for
``exceeds_boundary``, find and fix every violation one by one (``fixloop``) -> verify the
fixed candidate twice (within the boundary; within the original candidate) -> sentences.
A fix is offered (``fixed_candidate``, ``fix_verified``) only when both checks say
``within_boundary``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from prover.api import sha256_hex
from prover.environment import Environment, EnvironmentLoadError, load_environment
from prover.errors import PolicyLoadError
from prover.explain.document import (
    Data,
    Loaded,
    document_problem,
    dump_text,
    filesystem_key,
    load_document,
    read_data,
    reading_under,
)
from prover.explain.fixloop import LoopResult, aligned_reference, fix_all
from prover.explain.hints import blocker_for
from prover.explain.measure import delete_outright, grant_units
from prover.explain.models import (
    Blocker,
    CheckSummary,
    Enumeration,
    ExplainedResult,
    Explanation,
    GrantsKept,
    InputDigests,
    NeedStatus,
    PriorResult,
    Verification,
)
from prover.explain.needs import Need, closest_text, need_allowed, read_needs
from prover.explain.prior import Prior, compare_prior, read_prior
from prover.explain.proposal import explain_proposal
from prover.explain.repair import Repair, repair_refused
from prover.explain.session import Session
from prover.explain.setaside import SetAside, put_back, set_aside
from prover.explain.text import (
    blocker_texts,
    exceeds_texts,
    past_blocker_texts,
    within_texts,
)
from prover.policy.loader import load_policy
from prover.results import CheckOutcome, ReasonCode, Verdict
from prover.results.report import counterexample_json, counterexample_line
from prover.run.budget import DEFAULT_TIMEOUT_MS, Budget, BudgetExhausted

log = logging.getLogger(__name__)


def _data(text: str | bytes) -> Data:
    try:
        return read_data(text)
    except BudgetExhausted:
        raise
    except Exception:  # unreadable input has no data to point into
        return {}


def _loaded(text: str | bytes) -> Loaded | None:
    try:
        return load_document(read_data(text))
    except BudgetExhausted:
        raise
    except Exception:
        return None


def _summary(question: str, outcome: CheckOutcome, note: str | None = None) -> CheckSummary:
    return CheckSummary(
        question=question,
        result=outcome.verdict.value,
        reason_code=outcome.reason_code.value if outcome.reason_code else None,
        reason=outcome.reason,
        counterexample_line=counterexample_line(outcome.counterexample)
        if outcome.counterexample is not None
        else None,
        note=note,
    )


def _explained(outcome: CheckOutcome) -> ExplainedResult:
    return ExplainedResult(
        result=outcome.verdict.value,
        exit_code=outcome.exit_code,
        reason_code=outcome.reason_code.value if outcome.reason_code else None,
        reason=outcome.reason,
        counterexample=counterexample_json(outcome.counterexample),
        counterexample_line=counterexample_line(outcome.counterexample)
        if outcome.counterexample is not None
        else None,
    )


def _input_locations(candidate: str | bytes, boundary: str | bytes) -> list[str]:
    for side, text in (("candidate", candidate), ("boundary", boundary)):
        try:
            load_policy(text)
        except PolicyLoadError as exc:
            return [f"{side}: {exc.path}"] if exc.path else []
        except Exception:
            return []
    return []


def explain(
    candidate: str | bytes,
    boundary: str | bytes,
    *,
    result: str | bytes | dict[str, Any] | None = None,
    max_violations: int = 20,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    budget: Budget | None = None,
    reference_semantics: bool = False,
    environment: str | bytes | Environment | None = None,
    needs: list[dict[str, Any]] | None = None,
) -> Explanation:
    """Explain what the candidate allows beyond the boundary and offer a verified fix.

    ``needs`` are the requests that must keep working (counterexample-shaped objects:
    ``host``, ``port``, optional ``binary``, ``method``, ``path``; or ``path`` and
    ``access``; see :mod:`prover.explain.needs`): the fix keeps every one that both
    policies allow, and ``needs`` in the answer says what became of each. A need that
    cannot be read raises :class:`~prover.explain.needs.NeedsError` (a ``ValueError``
    naming the field).

    ``result`` is an earlier result to explain (``check_boundary`` JSON, a counterexample
    object or an ``assess_proposal`` result); it is re-verified by a fresh check, which
    is what gets explained. All checks share one deadline (``timeout_ms``, or ``budget``
    to cancel from another thread). ``reference_semantics`` and ``environment`` as for
    ``check_boundary``: every check, the fixes' included, uses the same evidence.
    """
    if max_violations < 1:
        raise ValueError("max_violations must be at least 1")
    wanted = read_needs(needs)
    budget = budget or Budget(timeout_ms)
    session = Session(
        boundary,
        budget,
        reference_semantics,
        environment=_environment(environment, budget.checkpoint),
    )
    with reading_under(session.budget.checkpoint):
        return _explain(session, candidate, boundary, result, max_violations, wanted)


def _environment(
    text: str | bytes | Environment | None, checkpoint: Callable[[], None]
) -> str | bytes | Environment | None:
    """The evidence read once for every check of the explanation; a text that does not
    read (or not before the deadline) is passed on as it is, so that the first check
    reports the error (or stops)."""
    if text is None or isinstance(text, Environment):
        return text
    try:
        return load_environment(text, checkpoint)
    except (EnvironmentLoadError, BudgetExhausted):
        return text


_OUT_OF_TIME = "the time budget ran out before the explanation finished; raise the timeout"


def _explain(
    session: Session,
    candidate: str | bytes,
    boundary: str | bytes,
    result: str | bytes | dict[str, Any] | None,
    max_violations: int,
    wanted: list[Need],
) -> Explanation:
    prior = read_prior(result)
    first = session.check_texts(candidate, boundary, final=True)
    if first.verdict is Verdict.ERROR and not session.reference_semantics:
        try:
            repair = repair_refused(candidate, boundary, session.budget.checkpoint)
        except BudgetExhausted:
            repair = None
        if repair is not None:
            inputs = (candidate, boundary, prior)
            return _repaired(session, first, repair, inputs, max_violations, wanted)
    receipt = session.last_receipt
    out_of_time = False
    cand_doc = bound_doc = None
    try:
        cand_doc = _loaded(candidate) if first.verdict is not Verdict.ERROR else None
        bound_doc = _loaded(boundary) if first.verdict is not Verdict.ERROR else None
    except BudgetExhausted:
        out_of_time = True
    policies = (cand_doc.policy, bound_doc.policy) if cand_doc and bound_doc else None
    settled: dict[int, NeedStatus] = {}
    if wanted and bound_doc is not None:
        settled = _settle(session, wanted, cand_doc, bound_doc)
    base: dict[str, Any] = {
        "result": _explained(first),
        "inputs": InputDigests(
            candidate_sha256=sha256_hex(candidate),
            boundary_sha256=sha256_hex(boundary),
            environment_sha256=receipt.environment_sha256 if receipt else None,
            assumptions=receipt.assumptions if receipt else None,
        ),
        "prior_result": compare_prior(prior, first, candidate, boundary, policies)
        if prior
        else None,
        "proposal": explain_proposal(prior.data)
        if prior and prior.kind == "proposal" and prior.data
        else None,
    }
    try:
        if out_of_time:
            raise BudgetExhausted(cancelled=session.budget.cancelled)
        explanation = _explain_verdict(
            first, session, candidate, boundary, cand_doc, bound_doc, base, max_violations
        )
    except BudgetExhausted:
        explanation = _out_of_time(first, session, base)
    note = _prior_sentence(base["prior_result"])
    if note:
        explanation.explanation = f"{note} {explanation.explanation}"
    if wanted:
        known = {need.number for need in session.needs}
        _report_needs(explanation, wanted, settled, first, known)
    return explanation


def _repaired(
    session: Session,
    first: CheckOutcome,
    repair: Repair,
    inputs: tuple[str | bytes, str | bytes, Prior | None],
    max_violations: int,
    wanted: list[Need],
) -> Explanation:
    """A candidate the runtime refuses: repaired into one it runs (``prover.explain.repair``),
    then explained and fixed as any other. The result stays the original's ``error``;
    the refusal is the first blocker, its ``fix`` the repair edits, which lead ``fix``."""
    candidate, boundary, prior = inputs
    blocker = blocker_for(first, _data(candidate), _data(boundary))
    blocker.locations = _input_locations(candidate, boundary)
    base: dict[str, Any] = {
        "result": _explained(first),
        "prior_result": compare_prior(prior, first, candidate, boundary, None) if prior else None,
        "proposal": explain_proposal(prior.data)
        if prior and prior.kind == "proposal" and prior.data
        else None,
    }
    digests = {"candidate_sha256": sha256_hex(candidate), "boundary_sha256": sha256_hex(boundary)}
    notes = "; ".join(repair.notes)
    if repair.text is None:
        summary, paragraph = blocker_texts(first.verdict.value, blocker)
        left = "; ".join(repair.remaining)
        done = f"the repairs ({notes}) leave" if repair.notes else "no repair applies to"
        stopped = f"{done} a policy the runtime still refuses: {left}"
        paragraph += (
            f" A repair was tried, but {stopped}: rewrite those entries, then explain again."
        )
        stuck = _stopped(
            summary, paragraph, [blocker], stopped, session, base, inputs=InputDigests(**digests)
        )
        note = _prior_sentence(base["prior_result"])
        if note:
            stuck.summary = f"{note} {stuck.summary}"
        if wanted:
            _report_needs(stuck, wanted, {}, first, set())
        return stuck
    session.candidate_label = "the repaired candidate"
    inner = _explain(session, repair.text, boundary, None, max_violations, wanted)
    blocker.fix = [edit.as_fix_op() for edit in repair.edits]
    blocker.fix_description = "repaired into a policy the runtime runs: " + notes
    blocker.meaning = (
        "The OpenShell runtime refuses the candidate, so nothing about it can be proved; "
        "the explanation repaired it into a policy the runtime runs (the edits below)."
    )
    blocker.rewrite_hints.insert(
        0,
        "Take fixed_candidate, or apply fix in order (the repair edits lead); to keep "
        "something a repair removed, rewrite it as the runtime accepts, then explain again."
        if inner.fix_verified or inner.result.result == "within_boundary"
        else "Continue from partial_candidate: the repaired candidate (the runtime runs it; "
        "not verified), rewritten as the other blockers say.",
    )
    within = inner.result.result == "within_boundary"
    verified = within or inner.fix_verified
    verification = inner.verification
    unproved = (
        "the runtime refuses the original candidate, so no check can compare a fix with it: "
        "the fix is compared with its repair (each repair edit is listed in fix)"
    )
    if within:
        verification = Verification(
            within_boundary=CheckSummary(
                question="fixed candidate within the boundary",
                result=inner.result.result,
                note="the check of exactly the fixed_candidate text (the repaired candidate)",
            ),
            narrows_candidate=CheckSummary(
                question="fixed candidate within the original candidate",
                result="not_run",
                note=unproved.replace(
                    "the fix is compared with its repair", "the fixed candidate is its repair"
                ),
            ),
            compared_with="the repaired candidate (the runtime refuses the original)",
        )
    elif verification is not None:
        narrowing = verification.narrows_candidate
        narrowing.note = f"{narrowing.note}; {unproved}" if narrowing.note else unproved
    count = len(repair.edits)
    removed = [note for note in repair.notes if " removed" in note]
    refused = (
        f"The OpenShell runtime refuses the candidate ({len(repair.refusals)} reason(s), see "
        f"blockers[0]); it was repaired into a policy the runtime runs ({count} edit(s)"
        + (f"; {'; '.join(removed)}" if removed else "")
        + ")"
    )
    if within:
        summary = (
            f"{refused}, which is within the boundary: the repaired candidate is the fix "
            "(fixed_candidate), proved within the boundary."
        )
    elif verified:
        summary = (
            f"{refused}, then {len(inner.violations)} violation(s) of the boundary were "
            "fixed: a fix proved within the boundary and within the repaired candidate is "
            "offered (fixed_candidate)."
        )
    else:
        summary = f"{refused}, but no verified fix is offered: {inner.summary}"
    # The needs' sentences (the inner explanation has them where its texts are used).
    prefix, suffix = _needs_sentences(inner.needs)
    paragraph = (
        f"The runtime's validator refuses the candidate: {'; '.join(repair.refusals)}. "
        f"Repaired towards the boundary (the first {count} edit(s) of fix, paths in the "
        f"original candidate): {notes}. The repairs narrow by construction; nothing is "
        "proved about the original, which the runtime never runs. For the repaired "
        "candidate: "
        + (
            "the prover proved it within the boundary; nothing more needs fixing."
            if within
            else inner.explanation
        )
        + (suffix if within else "")
    )
    note = _prior_sentence(base["prior_result"])
    summary = " ".join(part for part in (note, prefix if verified else "", summary) if part)
    fix = [*blocker.fix, *inner.fix] if verified else []
    return Explanation(
        summary=summary,
        explanation=paragraph,
        violations=inner.violations,
        blockers=[blocker, *inner.blockers],
        fix=fix,
        fixed_candidate=(repair.text if within else inner.fixed_candidate) if verified else None,
        fix_verified=verified,
        partial_candidate=None if verified else inner.partial_candidate or repair.text,
        verification=verification,
        enumeration=inner.enumeration,
        needs=inner.needs,
        inputs=inner.inputs.model_copy(update=digests),
        **base,
    )


def _settle(
    session: Session, wanted: list[Need], candidate: Loaded | None, boundary: Loaded
) -> dict[int, NeedStatus]:
    """Read every need against both policies: those the boundary refuses or the
    candidate does not grant are settled now; the rest are held (every fix keeps them).
    A candidate the fixes cannot read whole (a rule to set aside) holds none yet: the
    rest of it, once read, holds those it allows (``_past_blockers``)."""
    settled: dict[int, NeedStatus] = {}
    section = filesystem_key(boundary.data)
    for need in wanted:
        if not need_allowed(boundary.policy, need):
            settled[need.number] = NeedStatus(
                need=need.line,
                status="exceeds_boundary",
                closest=closest_text(boundary.policy, need, section),
            )
        elif candidate is not None and not need_allowed(candidate.policy, need):
            settled[need.number] = NeedStatus(need=need.line, status="not_granted")
        else:
            session.open_needs.append(need)
            if candidate is not None:
                session.needs.append(need)
    return settled


def _report_needs(
    explanation: Explanation,
    wanted: list[Need],
    settled: dict[int, NeedStatus],
    first: CheckOutcome,
    known: set[int],
) -> None:
    """Each need's status, and the needs beyond the boundary first in the summary
    (``known``: the needs the candidate was read to grant)."""
    fixed = _loaded(explanation.fixed_candidate) if explanation.fix_verified else None
    statuses: list[NeedStatus] = []
    for need in wanted:
        if need.number in settled:
            statuses.append(settled[need.number])
        elif first.verdict is Verdict.WITHIN and need.number in known:
            statuses.append(NeedStatus(need=need.line, status="kept"))
        elif fixed is not None:
            kept = need_allowed(fixed.policy, need)
            statuses.append(NeedStatus(need=need.line, status="kept" if kept else "dropped"))
        else:
            statuses.append(NeedStatus(need=need.line, status="open"))
    explanation.needs = statuses
    prefix, suffix = _needs_sentences(statuses)
    if prefix:
        explanation.summary = f"{prefix} {explanation.summary}"
    explanation.explanation += suffix


def _needs_sentences(statuses: list[NeedStatus]) -> tuple[str, str]:
    """What leads the summary (the needs beyond the boundary) and what ends the paragraph
    (the needs the candidate does not grant); empty strings when none."""
    beyond = [
        f"need {number} ({s.need}) exceeds the boundary, so no fix can keep it"
        + (f"; closest boundary entry: {s.closest}" if s.closest else "")
        for number, s in enumerate(statuses, start=1)
        if s.status == "exceeds_boundary"
    ]
    absent = [n for n, s in enumerate(statuses, start=1) if s.status == "not_granted"]
    suffix = ""
    if absent:
        listed = ", ".join(str(n) for n in absent)
        suffix = (
            f" Need(s) {listed}: the candidate does not allow them, and a fix only narrows; "
            "add them to the candidate (the boundary allows them) and explain again."
        )
    return ("; ".join(beyond) + "." if beyond else ""), suffix


def _prior_sentence(prior: PriorResult | None) -> str | None:
    if prior is None:
        return None
    if prior.kind == "unrecognised":
        return f"The given result was not used: {prior.note}."
    if prior.agrees is False:
        return f"Note: {prior.note}."
    return None


def _explain_verdict(
    first: CheckOutcome,
    session: Session,
    candidate: str | bytes,
    boundary: str | bytes,
    cand_doc: Loaded | None,
    bound_doc: Loaded | None,
    base: dict[str, Any],
    max_violations: int,
) -> Explanation:
    if first.verdict is Verdict.WITHIN:
        summary, paragraph = within_texts(first.decided_by)
        return Explanation(
            summary=summary,
            explanation=paragraph,
            enumeration=Enumeration(complete=True, checks_run=session.checks_run),
            **base,
        )
    if first.verdict is Verdict.UNSUPPORTED and bound_doc is not None:
        original = _data(candidate)
        aside = set_aside(session, original, bound_doc, first)
        if aside.rules:
            return _past_blockers(aside, session, original, bound_doc, base, max_violations)
    if first.verdict is Verdict.EXCEEDS and (cand_doc is None or bound_doc is None):
        return _unfixable(candidate, boundary, session, base)
    if first.verdict is not Verdict.EXCEEDS or cand_doc is None or bound_doc is None:
        return _not_decided(first, candidate, boundary, session, base)
    loop = _fixed(session, cand_doc, bound_doc, first, max_violations)
    return _exceeds(loop, session, candidate, cand_doc, base)


def _fixed(
    session: Session, doc: Loaded, boundary: Loaded, first: CheckOutcome, max_violations: int
) -> LoopResult:
    try:
        return fix_all(session, doc, boundary, first, max_violations)
    except BudgetExhausted:
        raise
    except Exception as exc:  # a bug here must never turn into a claimed fix
        log.exception("internal error while explaining")
        return LoopResult(
            doc=doc,
            outcome=first,
            stopped_because=f"an internal error stopped the explanation ({type(exc).__name__}: "
            f"{exc})",
        )


def _past_blockers(
    aside: SetAside,
    session: Session,
    original: Data,
    boundary: Loaded,
    base: dict[str, Any],
    max_violations: int,
) -> Explanation:
    """Blocked rules set aside: every blocker, and the rest explained and fixed."""
    if aside.outcome.verdict is Verdict.EXCEEDS and aside.doc is not None:
        # The needs the rest still allows: one only a rule set aside grants is not the
        # rest's to keep (and would otherwise rule out every fix).
        held, rest_doc = session.needs, aside.doc
        session.needs = [n for n in session.open_needs if need_allowed(rest_doc.policy, n)]
        try:
            loop = _fixed(session, rest_doc, boundary, aside.outcome, max_violations)
        finally:
            session.needs = held
        blockers = [*aside.blockers, *loop.blockers]
        violations, edits, rest = loop.violations, loop.edits, loop.outcome.verdict.value
        stopped_in_rest, fixed = loop.stopped_because, loop.doc.data
    else:
        blockers, violations, edits = list(aside.blockers), [], []
        rest, stopped_in_rest, fixed = aside.outcome.verdict.value, None, aside.data
    partial = None
    if edits:
        partial = dump_text(put_back(original, fixed, aside.rules))
    if len(blockers) == 1 and not violations:
        summary, paragraph = blocker_texts(base["result"].result, blockers[0])
        paragraph += f" With the blocked rule set aside, the rest of the candidate is {rest}."
    else:
        summary, paragraph = past_blocker_texts(
            base["result"].result, blockers, violations, rest, partial
        )
    # Never silently: the rules set aside are named whatever stopped the rest, and the
    # partial candidate is said to carry them unchanged (a later repair may narrow them).
    kept_as = " and are in partial_candidate unchanged, undecided" if partial else ""
    aside_text = (
        f"{len(aside.rules)} rule(s) the prover cannot decide were set aside: "
        + ", ".join(f"'{key}'" for key in aside.rules)
        + kept_as
    )
    stopped = f"{stopped_in_rest}; {aside_text}" if stopped_in_rest else aside_text
    if partial:
        summary = summary.rstrip(".") + f"; {aside_text}."
    return _stopped(
        summary,
        paragraph,
        blockers,
        stopped,
        session,
        base,
        violations=violations,
        partial_candidate=partial,
    )


def _stopped(
    summary: str,
    paragraph: str,
    blockers: list[Blocker],
    stopped: str,
    session: Session,
    base: dict[str, Any],
    **more: Any,
) -> Explanation:
    """An explanation that stops short of a verified fix, saying why (``stopped``)."""
    return Explanation(
        summary=summary,
        explanation=paragraph,
        blockers=blockers,
        enumeration=Enumeration(
            complete=False, stopped_because=stopped, checks_run=session.checks_run
        ),
        **more,
        **base,
    )


def _out_of_time(first: CheckOutcome, session: Session, base: dict[str, Any]) -> Explanation:
    """The fresh result, unexplained: the deadline passed while reading or fixing."""
    if first.verdict is not Verdict.EXCEEDS:
        blocker = blocker_for(first, {}, {})
        summary, paragraph = blocker_texts(first.verdict.value, blocker)
        blockers = [blocker] if first.verdict is not Verdict.WITHIN else []
    else:
        summary, paragraph = exceeds_texts([], [], False, _OUT_OF_TIME, None)
        blockers = []
    return _stopped(summary, paragraph, blockers, _OUT_OF_TIME, session, base)


def _unfixable(
    candidate: str | bytes,
    boundary: str | bytes,
    session: Session,
    base: dict[str, Any],
) -> Explanation:
    """The check found a violation, but a policy has an entry outside the model that the
    check could leave out (both policies have it alike) and the fixes cannot: the
    violation is reported, and the entry as the blocker of any fix."""
    problems = [
        f"{label} policy {problem}"
        for label, text in (("candidate", candidate), ("boundary", boundary))
        if (problem := document_problem(text)) is not None
    ]
    reason = "; ".join(problems) or "a policy could not be read for fixing"
    blocker = blocker_for(
        CheckOutcome.unsupported(ReasonCode.UNSUPPORTED_POLICY_SHAPE, reason),
        _data(candidate),
        _data(boundary),
    )
    stopped = (
        "no fix is offered: the fixes cannot model an entry that the check left out "
        f"because both policies have it alike ({reason})"
    )
    return _stopped(
        "The candidate exceeds the boundary (result.counterexample); no fix is offered: "
        "an entry both policies share is outside the model (see the blocker).",
        "The check proved the violation shown in result.counterexample. Rewrite the "
        "blocker's entry in both policies as the hints say, then explain again for a "
        "verified fix.",
        [blocker],
        stopped,
        session,
        base,
    )


def _not_decided(
    outcome: CheckOutcome,
    candidate: str | bytes,
    boundary: str | bytes,
    session: Session,
    base: dict[str, Any],
) -> Explanation:
    blocker: Blocker = blocker_for(outcome, _data(candidate), _data(boundary))
    if outcome.verdict is Verdict.ERROR:
        blocker.locations = _input_locations(candidate, boundary)
    summary, paragraph = blocker_texts(outcome.verdict.value, blocker)
    stopped = f"the check returned {outcome.verdict.value}"
    return _stopped(summary, paragraph, [blocker], stopped, session, base)


def _exceeds(
    loop: LoopResult,
    session: Session,
    candidate: str | bytes,
    original: Loaded,
    base: dict[str, Any],
) -> Explanation:
    verification: Verification | None = None
    fixed_text: str | None = None
    verified = False
    stopped = loop.stopped_because
    if loop.outcome.verdict is Verdict.WITHIN:
        fixed_text = dump_text(loop.doc.data)
        reference, note, phrase = aligned_reference(original.data, loop.doc.data, loop.exact_hosts)
        reference_text = candidate if note is None else dump_text(reference)
        narrowing = session.check_texts(fixed_text, reference_text, final=True)
        verification = Verification(
            within_boundary=_summary(
                "fixed candidate within the boundary",
                loop.outcome,
                "the last re-check, on exactly the fixed_candidate text",
            ),
            narrows_candidate=_summary(
                f"fixed candidate within {session.candidate_label}", narrowing, note
            ),
            compared_with=session.candidate_label
            + (f" with {phrase}" if phrase is not None else ""),
        )
        verified = narrowing.verdict is Verdict.WITHIN
        if not verified:
            stopped = (
                f"the fixed candidate was not proved within {session.candidate_label} "
                f"({narrowing.verdict.value})"
            )
    kept = None
    if verified:
        deleted = load_document(delete_outright(original.data, loop.violations))
        kept = GrantsKept(
            before=grant_units(original.policy),
            with_fix=grant_units(loop.doc.policy),
            with_rule_deleted=grant_units(deleted.policy) if deleted is not None else None,
        )
    summary, paragraph = exceeds_texts(
        loop.violations, loop.blockers, verified, stopped, verification, kept
    )
    return Explanation(
        summary=summary,
        explanation=paragraph,
        violations=loop.violations,
        blockers=loop.blockers,
        grants_kept=kept,
        fix=[edit.as_fix_op() for edit in loop.edits] if verified else [],
        fixed_candidate=fixed_text if verified else None,
        partial_candidate=_partial(loop, verified),
        fix_verified=verified,
        verification=verification,
        enumeration=Enumeration(
            complete=verified, stopped_because=stopped, checks_run=session.checks_run
        ),
        **base,
    )


def _partial(loop: LoopResult, verified: bool) -> str | None:
    """The partly fixed candidate, when fixes were made but a blocker remains."""
    if verified or not loop.edits or loop.outcome.verdict is Verdict.WITHIN:
        return None
    if loop.outcome.verdict is Verdict.EXCEEDS and not loop.blockers:
        return None
    return dump_text(loop.doc.data)


def explain_input_error(
    reason: str, *, candidate: str | bytes | None = None, boundary: str | bytes | None = None
) -> Explanation:
    """The explanation of input that could not even be read (a missing or unreadable
    file): an ``error`` result, as ``policy-prover check`` reports it."""
    outcome = CheckOutcome.error(reason)
    blocker = blocker_for(outcome, {}, {})
    summary, paragraph = blocker_texts(outcome.verdict.value, blocker)
    return Explanation(
        summary=summary,
        explanation=paragraph,
        result=_explained(outcome),
        blockers=[blocker],
        enumeration=Enumeration(
            complete=False, stopped_because="the input could not be read", checks_run=0
        ),
        inputs=InputDigests(
            candidate_sha256=sha256_hex(candidate) if candidate is not None else None,
            boundary_sha256=sha256_hex(boundary) if boundary is not None else None,
        ),
    )


def explain_stopped(
    cancelled: bool, *, candidate: str | bytes, boundary: str | bytes
) -> Explanation:
    """The explanation of a call stopped before its check could start (it waited for a
    worker until its deadline, or was cancelled): ``inconclusive``, nothing read."""
    outcome = CheckOutcome.stopped(cancelled)
    blocker = blocker_for(outcome, {}, {})
    summary, paragraph = blocker_texts(outcome.verdict.value, blocker)
    return Explanation(
        summary=summary,
        explanation=paragraph,
        result=_explained(outcome),
        blockers=[blocker],
        enumeration=Enumeration(
            complete=False,
            stopped_because="the deadline passed before a worker was free"
            if not cancelled
            else "the call was cancelled before a worker was free",
            checks_run=0,
        ),
        inputs=InputDigests(
            candidate_sha256=sha256_hex(candidate), boundary_sha256=sha256_hex(boundary)
        ),
    )

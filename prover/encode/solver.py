"""The Z3 stage of the network check for one identity mode (spec §9.8 step 3).

Question: is there an action the candidate allows and the boundary refuses? The candidate
exceeds iff some candidate endpoint ``e`` has an action ``a`` with

    grant_e(a) ∧ ¬cand_deny(a) ∧ cand_ip_ok(a) ∧ ¬boundary_allows(a)

so by default one query is asked per group of candidate endpoints with the same host and
port set (a *slice*). Every term of ``cand_deny``, ``cand_ip_ok`` and ``boundary_allows``
implies the connection of its own endpoint, so a term whose endpoint cannot share a
connection with the slice's endpoints is false throughout the slice and is left out
(:mod:`prover.encode.overlap` decides "cannot", conservatively). All slices share one
``z3.Context``, one solver (``push``/``pop``) and the cached per-endpoint terms.

The queries mention no string: host, path, method and binaries appear only through
Boolean atoms, realised field by field by a lazy search (:mod:`prover.encode.search`),
because Z3's string theory is erratic on Boolean combinations of regex memberships.

``unsat`` for every slice means ``within``. On ``sat`` a canonical witness is searched
for (:mod:`prover.encode.witness`), decoded, validated and replayed through the concrete
evaluator. "No canonical witness in this slice" lets the search go on and, if no slice
yields one, ends ``invalid_witness`` — never ``within``. A model that decodes but does
not validate or replay is ``invalid_witness`` at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import z3

from prover.concrete.canonical import (
    is_action_domain_binary,
    is_action_domain_path,
    is_canonical_binary,
    is_canonical_host,
    is_canonical_rest_path,
    is_http_token,
    is_upper_http_token,
)
from prover.concrete.network import network_allows
from prover.encode.action import (
    WitnessDecodeError,
    decode_action,
    new_action,
    scalar_domain,
)
from prover.encode.logic import SolverGaveUp, dispose_later, make_solver, pause_gc, resume_gc
from prover.encode.network import EndpointRef, PolicyTerms
from prover.encode.oracle import StringOracle
from prover.encode.overlap import EndpointIndex
from prover.encode.preferences import string_exemplars
from prover.encode.relations import Relations
from prover.encode.search import LazySearch
from prover.encode.session import SolverSession
from prover.encode.strings import StringAtoms, atom_key
from prover.encode.terms import Term, term_and, term_not
from prover.encode.witness import WitnessSearch
from prover.policy.model import NetworkAction, Policy
from prover.results import ReasonCode
from prover.run.budget import CANCELLED_REASON, TIMEOUT_REASON, Budget, BudgetExhausted
from prover.run.solver_slots import solver_slots

#: How close to the deadline a Z3 time-limit stop still counts as the deadline.
DEADLINE_SLACK_MS = 10


def _stopped_by_time_limit(reason: str) -> bool:
    text = reason.lower()
    return "timeout" in text or "cancel" in text


INVALID_WITNESS_REASON = "solver returned a model that could not be decoded"
SHORT_CHECK_MS = 100
"""Time limit of the checks that only shape a witness (never of a deciding check)."""


@dataclass(frozen=True, slots=True)
class NetworkModeResult:
    """The outcome of one identity mode: ``within``, ``exceeds`` (with a validated,
    replayed ``witness``) or ``inconclusive`` (with a reason)."""

    status: Literal["within", "exceeds", "inconclusive"]
    witness: NetworkAction | None = None
    reason_code: ReasonCode | None = None
    reason: str | None = None
    decided_by: str = "z3"
    queries: int = 0
    slices: int = 0


def witness_is_canonical(action: NetworkAction, *, engine: bool = False) -> bool:
    """Spec §9.8 step 3: canonical binaries, host, method and path; ``engine`` (the
    default semantics) also wants an upper-case method (:func:`is_upper_http_token`)."""
    if action.binary_identity_required:
        for binary in (action.binary, action.ancestor_binary):
            if binary is None or not is_canonical_binary(binary):
                return False
            if not is_action_domain_binary(binary):
                return False
    if not is_canonical_host(action.host):
        return False
    if action.protocol == "rest":
        if action.method is None or not is_http_token(action.method):
            return False
        if engine and not is_upper_http_token(action.method):
            return False
        if action.path is None or not is_canonical_rest_path(action.path):
            return False
        if not is_action_domain_path(action.path):
            return False
    return 1 <= action.port <= 65535


class _InvalidWitness(Exception):
    pass


_UNREADABLE = object()

Slice = tuple[list[EndpointRef], list[EndpointRef], list[EndpointRef]]
"""(the candidate endpoints granting in it, candidate endpoints it keeps, boundary ones)."""


class _Checker:
    """Budgeted Z3 checks of one mode; holds no reference to the mode (no reference
    cycle keeps the mode's terms alive once it is dropped)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.queries = 0

    def timeout_ms(self) -> int:
        self.budget.checkpoint()
        return self.budget.remaining_ms()

    def check(
        self, solver: z3.Solver, assumptions: list[z3.BoolRef], short: bool
    ) -> z3.CheckSatResult:
        """A budgeted check that never returns ``unknown``: it raises
        ``BudgetExhausted`` when the budget ran out or was cancelled, else
        ``SolverGaveUp`` with Z3's reason."""
        budget = self.budget
        budget.checkpoint()
        remaining = budget.remaining_ms()
        if remaining <= 0:
            raise BudgetExhausted(cancelled=False)
        solver.set("timeout", min(remaining, SHORT_CHECK_MS) if short else remaining)
        budget.checkpoint()  # an interrupt issued before check() starts is lost
        result = solver.check(*assumptions)
        self.queries += 1
        if result != z3.unknown:
            return result
        if budget.cancelled or budget.expired:
            raise BudgetExhausted(cancelled=budget.cancelled)
        reason = solver.reason_unknown()
        if _stopped_by_time_limit(reason) and budget.remaining_ms() <= DEADLINE_SLACK_MS:
            # Z3's own timer was set to the budget's remainder (floored to whole
            # milliseconds), so it can fire just before the deadline, and Z3 then says
            # "canceled" as often as "timeout": the budget ran out, not the solver.
            raise BudgetExhausted(cancelled=False)
        raise SolverGaveUp(reason)


class _ModeSolver:
    """One identity mode of one check: one context, one solver, cached terms."""

    def __init__(
        self,
        ctx: z3.Context,
        candidate: Policy,
        boundary: Policy,
        identity: bool,
        budget: Budget,
        skip: frozenset[EndpointRef] = frozenset(),
        like: _ModeSolver | None = None,
    ) -> None:
        """``like``: an earlier mode of the same check and context, whose
        mode-independent parts (globs, address predicates, language relations) this
        one reuses instead of building them again."""
        self.ctx = ctx
        self.skip = skip
        self.candidate = candidate
        self.boundary = boundary
        self.budget = budget
        self.checker = _Checker(budget)
        self.slices = 0
        self.action = new_action(
            ctx,
            (boundary, candidate),
            identity=identity,
            like=None if like is None else like.action,
        )
        self.atoms = StringAtoms(self.action.globs, "strict" if identity else "relaxed")
        self.relations = (
            like.relations
            if like is not None
            else Relations(self.action.globs, self.checker.timeout_ms)
        )
        tick = budget.checkpoint
        self.cand = PolicyTerms(candidate, self.action, identity, self.atoms, tick)
        self.bound = PolicyTerms(boundary, self.action, identity, self.atoms, tick)
        if like is not None and like.solver.num_scopes() == 0:
            # The same scalar domain over the same address and port: only string atoms
            # and query classes differ between modes, and the earlier mode asserted
            # those in scopes it has popped. Reusing the solver spares its set-up.
            self.solver = like.solver
        else:
            self.solver = make_solver(ctx)
            # The main query mentions no string: only the scalar parts of the domain.
            domain = scalar_domain(self.action)
            self.solver.add(*domain["ip"], *domain["port"])
        oracle = StringOracle(self.action, self.atoms, self.checker.check)
        self.search = LazySearch(self.solver, self.atoms, oracle, self.checker.check)
        self.witnesses = WitnessSearch(self.action, self.atoms, self.search)

    # -- slices ------------------------------------------------------------------------
    def slices_of(self, slicing: bool) -> list[Slice]:
        """The slices to ask, without the grants of the ``skip`` endpoints (their terms
        still take part in every slice they may overlap)."""
        cand_refs = self.cand.refs()
        granting = [ref for ref in cand_refs if ref not in self.skip]
        if not granting:
            return []
        if not slicing:
            return [(granting, cand_refs, self.bound.refs())]
        cand_index = EndpointIndex((ref, self.cand.endpoint(ref)) for ref in cand_refs)
        bound_index = EndpointIndex((ref, self.bound.endpoint(ref)) for ref in self.bound.refs())
        groups: dict[tuple[str, frozenset[int]], list[EndpointRef]] = {}
        for ref in granting:
            endpoint = self.cand.endpoint(ref)
            groups.setdefault((endpoint.host.lower(), frozenset(endpoint.ports)), []).append(ref)
        out: list[Slice] = []
        for (host, ports), grants in groups.items():
            self.budget.checkpoint()
            kept_cand = cand_index.overlapping(host, ports)
            out.append((grants, kept_cand, bound_index.overlapping(host, ports)))
        return out

    def slice_formula(self, piece: Slice) -> Term:
        grants, cand_refs, bound_refs = piece
        candidate_allows = self.cand.allows(cand_refs, grants=grants)
        boundary_allows = self.bound.allows(bound_refs)
        return term_and([candidate_allows, term_not(boundary_allows)], self.ctx)

    # -- checks ------------------------------------------------------------------------
    @property
    def queries(self) -> int:
        return self.checker.queries

    def check_on(
        self, solver: z3.Solver, assumptions: list[z3.BoolRef], short: bool
    ) -> z3.CheckSatResult:
        return self.checker.check(solver, assumptions, short)

    # -- the mode ----------------------------------------------------------------------
    def run(self, slicing: bool) -> NetworkModeResult:
        unreadable = False
        for piece in self.slices_of(slicing):
            self.budget.checkpoint()
            formula = self.slice_formula(piece)
            self.slices += 1
            if formula.value is False:
                continue
            witness = self._solve_slice(piece, formula)
            if isinstance(witness, NetworkAction):
                return self.result("exceeds", witness=witness)
            unreadable |= witness is _UNREADABLE
        if unreadable:
            return self.result(
                "inconclusive",
                reason_code=ReasonCode.INVALID_WITNESS,
                reason=INVALID_WITNESS_REASON,
            )
        return self.result("within")

    def _solve_slice(self, piece: Slice, formula: Term) -> NetworkAction | object | None:
        """``None`` (contained), a replayed witness, or :data:`_UNREADABLE` (the slice
        exceeds but has no canonical witness)."""
        grants = piece[0]
        focus = {atom_key("host", "host", self.cand.endpoint(grants[0]).host.lower())}
        facts = self.atoms.lemmas(formula.atoms, self.relations, focus=focus)
        fields = sorted({key[0] for key in formula.atoms})
        granting = [(self.candidate.rules[ri], self.cand.endpoint((ri, ei))) for ri, ei in grants]
        # Values built from the granting patterns are tried (each by Z3 on a constant)
        # before the oracle searches for a string: it decides the same, faster.
        hints = string_exemplars(granting)
        self.solver.push()
        try:
            self.solver.add(*facts, *self.search.relevant_learned(formula.atoms))
            self.solver.add(formula.expr)
            if self.search.run(formula.atoms, fields=fields, prefer=hints) is None:
                return None
            found = self.witnesses.find(formula.atoms, granting)
            if found is None:
                return _UNREADABLE
            try:
                action = decode_action(found.model, self.action, found.strings)
            except WitnessDecodeError as exc:
                raise _InvalidWitness(str(exc)) from exc
        finally:
            self.solver.pop()
        if not witness_is_canonical(action, engine=self.action.engine):
            raise _InvalidWitness(f"non-canonical witness {action}")
        if not network_allows(self.candidate, action) or network_allows(self.boundary, action):
            raise _InvalidWitness(f"witness does not replay: {action}")
        return action

    def result(
        self,
        status: Literal["within", "exceeds", "inconclusive"],
        *,
        witness: NetworkAction | None = None,
        reason_code: ReasonCode | None = None,
        reason: str | None = None,
    ) -> NetworkModeResult:
        return NetworkModeResult(
            status,
            witness=witness,
            reason_code=reason_code,
            reason=reason,
            queries=self.queries,
            slices=self.slices,
        )


def _inconclusive(code: ReasonCode, reason: str) -> NetworkModeResult:
    return NetworkModeResult("inconclusive", reason_code=code, reason=reason)


def _stopped(budget: Budget) -> NetworkModeResult:
    if budget.cancelled:
        return _inconclusive(ReasonCode.CANCELLED, CANCELLED_REASON)
    return _inconclusive(ReasonCode.SOLVER_TIMEOUT, TIMEOUT_REASON)


def solve_network_mode(
    candidate: Policy,
    boundary: Policy,
    *,
    identity: bool,
    budget: Budget,
    slicing: bool = True,
    skip: frozenset[EndpointRef] = frozenset(),
    session: SolverSession | None = None,
) -> NetworkModeResult:
    """Decide with Z3 whether ``candidate`` allows a network action ``boundary`` refuses,
    with binary identity enforced (``identity``) or ignored.

    ``skip`` names candidate endpoints (rule index, endpoint index) already proved not to
    grant any such action (:func:`prover.checks.structural.structural_coverage`): no
    query is asked for their grants, but their deny and address terms stay in the
    slices of the other endpoints, which may depend on them.

    Both policies must have passed shape validation. One ``z3.Context`` serves the whole
    call, and with a ``session`` every call of the same check (the caller closes the
    session when the check ends); it is registered with ``budget`` so that
    ``budget.cancel()`` from another thread interrupts it. ``slicing=False`` asks one
    monolithic query (kept for differential testing). The solve holds one of the
    process's solver slots (:mod:`prover.run.solver_slots`), waiting for it at most until
    the budget runs out.
    """
    try:
        budget.checkpoint()
        with solver_slots().hold(budget):
            if session is not None:
                shared = _shared(session)
                return _solve_owned(
                    shared.ctx,
                    shared.owned,
                    candidate,
                    boundary,
                    identity,
                    budget,
                    slicing,
                    skip,
                    shared,
                )
            return _solve_in_slot(candidate, boundary, identity, budget, slicing, skip)
    except BudgetExhausted:
        return _stopped(budget)


@dataclass(slots=True)
class _Shared:
    """A session's context and every Z3 object made in it."""

    ctx: z3.Context
    owned: list[object]
    last_mode: _ModeSolver | None = None


def _shared(session: SolverSession) -> _Shared:
    shared = session.shared
    if isinstance(shared, _Shared):
        return shared
    pause_gc()  # see prover.encode.logic: memory management around a solve
    ctx = z3.Context()
    made = _Shared(ctx, [ctx])
    session.shared = made
    return made


def close_shared(shared: object) -> None:
    """End a session: its objects are dropped on the disposal thread, then the
    collector resumes."""
    assert isinstance(shared, _Shared)
    owned = tuple(shared.owned)
    shared.owned.clear()
    dispose_later(owned, after=resume_gc)


def _solve_in_slot(
    candidate: Policy,
    boundary: Policy,
    identity: bool,
    budget: Budget,
    slicing: bool,
    skip: frozenset[EndpointRef],
) -> NetworkModeResult:
    owned: list[object] = []
    pause_gc()  # see prover.encode.logic: memory management around a solve
    try:
        ctx = z3.Context()
        owned.append(ctx)
        result = _solve_owned(ctx, owned, candidate, boundary, identity, budget, slicing, skip)
    except BaseException:
        resume_gc()
        raise
    dispose_later(tuple(owned), after=resume_gc)
    owned.clear()
    return result


def _solve_owned(
    ctx: z3.Context,
    owned: list[object],
    candidate: Policy,
    boundary: Policy,
    identity: bool,
    budget: Budget,
    slicing: bool,
    skip: frozenset[EndpointRef],
    shared: _Shared | None = None,
) -> NetworkModeResult:
    """The solve in ``ctx``; every Z3 object it makes is reachable from ``owned``
    afterwards. With ``shared`` (a session), the mode reuses what the session's earlier
    mode built that depends neither on the mode nor on the policies."""
    mode: _ModeSolver | None = None
    like = shared.last_mode if shared is not None else None
    with budget.solver_context(ctx):
        try:
            mode = _ModeSolver(ctx, candidate, boundary, identity, budget, skip, like)
            owned.append(mode)
            if shared is not None:
                shared.last_mode = mode
            return mode.run(slicing)
        except BudgetExhausted:
            stopped = _stopped(budget)
        except SolverGaveUp as exc:
            if "timeout" in exc.reason.lower():
                stopped = _inconclusive(ReasonCode.SOLVER_TIMEOUT, TIMEOUT_REASON)
            else:
                reason = exc.reason or "Z3 returned unknown"
                stopped = _inconclusive(ReasonCode.SOLVER_UNKNOWN, reason)
        except _InvalidWitness:
            stopped = _inconclusive(ReasonCode.INVALID_WITNESS, INVALID_WITNESS_REASON)
        except z3.Z3Exception as exc:
            if budget.cancelled or budget.expired:
                stopped = _stopped(budget)
            else:
                stopped = _inconclusive(ReasonCode.SOLVER_UNKNOWN, f"Z3 failed: {exc}")
    if mode is None:
        return stopped
    return replace(stopped, queries=mode.queries, slices=mode.slices)

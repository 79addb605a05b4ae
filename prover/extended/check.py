"""The extended boundary check: decide soundly what the reference reports ``unsupported``.

Each policy is read as two reference-model policies (:mod:`prover.extended.reading`):
``upper`` allows at least what the runtime lets it do, ``lower`` at most, plus the
*opaque* grants no reference-model policy expresses. Then:

1. ``within`` when ``upper(candidate)`` is within ``lower(boundary)`` (the reference
   pipeline: shortcut, probes, Z3) and every opaque candidate grant is covered by an
   identical boundary configuration, or by raw L4 access where that carries it;
2. ``exceeds`` only with a witness that ``lower(candidate)`` allows and
   ``envelope(boundary)`` (every boundary endpoint read as raw access, everything the
   boundary could possibly allow) refuses, replayed concretely: the first pair's
   witness when it replays, else the witness of ``lower(candidate)`` against
   ``envelope(boundary)``;
3. otherwise ``unsupported``, naming the constructs and endpoint pairs it depends on.

Identical policies are within each other whatever they contain: the runtime treats them
alike. Middlewares select by host and may add headers and replace bodies (an authority,
``openshell-supervisor-middleware``): they must be identical on both sides wherever the
candidate reaches, and the same middleware then acts on the same traffic.

Before any of this, the runtime's reading (:mod:`prover.runtime`): the filesystem the
sandbox enforces (baseline paths, Landlock on or off), and with evidence the executables
each binary matches.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING

from prover.checks.boundary import check_models, check_network, known_identity
from prover.extended.hosts import ANY_HOST
from prover.extended.reading import (
    CONNECTION_ONLY,
    Opaque,
    Reading,
    may_select,
    middleware_selectors,
    read_policy,
)
from prover.extended.slots import endpoint_slots
from prover.policy.facts import fact
from prover.policy.model import Filesystem, NetworkAction, Policy, Rule
from prover.policy.shape import shape_problems
from prover.results import (
    CheckOutcome,
    FilesystemCounterexample,
    NetworkCounterexample,
    ReasonCode,
    Verdict,
)
from prover.run.budget import Budget
from prover.runtime.binaries import with_effective_binaries
from prover.runtime.effective import FilesystemReading, FilesystemWorld

# The concrete evaluator and the witness replay (prover.concrete, prover.concrete.witness) are
# imported where a witness is checked: a pair decided without one (the CLI's seed
# example) never loads them.

if TYPE_CHECKING:
    from prover.environment.evidence import Evidence
    from prover.policy.schema import AuthoredPolicy

SHAPE = ReasonCode.UNSUPPORTED_POLICY_SHAPE
#: How many shape problems one ``unsupported`` reason lists.
MAX_SHAPE_PROBLEMS = 6
_NO_FILES = Filesystem(include_workdir=False, read_only=(), read_write=())


def check_extended(
    candidate: AuthoredPolicy,
    boundary: AuthoredPolicy,
    budget: Budget,
    evidence: Evidence | None = None,
) -> CheckOutcome:
    """The whole extended check on two loaded policies (limits already checked)."""
    if candidate == boundary:
        # The runtime treats identical policies alike, whatever they contain (one it
        # refuses never gets here: the loader answers error, prover.runtime.validation).
        return CheckOutcome.within(decided_by="equality")
    # A boundary middleware the candidate lacks only restricts the boundary: an exceed
    # stands, but within holds only where it selects nothing the candidate can reach.
    missing = _unmatched_middlewares(boundary, candidate)
    # The candidate's own middlewares are authorities (they may add headers and replace
    # bodies): a within must not depend on one; and they may refuse anything, so no
    # witness is published to a host they select.
    extra = _unmatched_middlewares(candidate, boundary)
    omit, coupled = endpoint_slots(candidate, boundary, budget.checkpoint)
    problems: list[str] = []
    for label, policy in (("boundary", boundary), ("candidate", candidate)):
        if evidence is None and fact(policy, "extended shape clean", lambda p=policy: _clean(p)):
            continue  # leaving endpoints out adds no problem
        # What is left out is decided already, whatever its shape.
        found = shape_problems(
            policy, extended=True, known_identity=known_identity(evidence), omit=omit
        )
        problems += [f"{label} policy {p}" for p in islice(found, MAX_SHAPE_PROBLEMS + 1)]
    if problems:
        # Every blocker in one answer, so that one round of edits can clear them all.
        shown = list(dict.fromkeys(problems))
        more = len(shown) - MAX_SHAPE_PROBLEMS
        reason = "; ".join(shown[:MAX_SHAPE_PROBLEMS]) + (f"; and {more} more" if more > 0 else "")
        return CheckOutcome.unsupported(SHAPE, reason)
    coupled -= omit
    cand = read_policy(candidate, omit=omit, checkpoint=budget.checkpoint)
    if extra:
        cand = replace(cand, restricting=middleware_selectors(candidate, extra))
    bound = read_policy(boundary, omit=omit, coupled=coupled, checkpoint=budget.checkpoint)
    noted = (f"candidate-only middlewares ({_names(extra)}) read as authorities",) if extra else ()
    readings = tuple(dict.fromkeys(cand.constructs + bound.constructs + noted))
    files = FilesystemReading(
        cand.upper,
        bound.lower,
        candidate_proxy=bool(candidate.network_policies),
        boundary_proxy=bool(boundary.network_policies),
        evidence=evidence,
    )
    worlds = files.worlds()
    readings += tuple(f for f in worlds[0].facts() if f not in readings)
    start = _start_outcome(worlds[0])
    if start is not None:
        return start.model_copy(update={"readings": readings})
    outcome = _decide(cand, bound, budget, evidence, (files, worlds[0]))
    if outcome.verdict is Verdict.WITHIN:
        outcome = _other_worlds(worlds[1:], cand, budget, evidence) or outcome
    readings += _start_assumptions(worlds[0], outcome)
    if outcome.verdict is Verdict.EXCEEDS and isinstance(
        outcome.counterexample, NetworkCounterexample
    ):
        # named with a binary of the effective readings: an executable a process can be
        outcome = _named(outcome, *_effective(cand, bound, worlds[0], evidence))
    if outcome.verdict is Verdict.WITHIN:
        reachable = [
            (ep.host or ANY_HOST).lower()
            for rule in candidate.network_policies.values()
            for ep in rule.endpoints
        ]
        for names, reason in ((missing, _middleware_reason), (extra, _authority_reason)):
            selectors = middleware_selectors(candidate if names is extra else boundary, names)
            if names and any(may_select(selectors, host) for host in reachable):
                outcome = CheckOutcome.unsupported(SHAPE, reason(names))
                break
    return outcome.model_copy(update={"readings": readings})


def _clean(policy: AuthoredPolicy) -> bool:
    """The whole policy has no shape problem (then neither has any part of it)."""
    return next(shape_problems(policy, extended=True), None) is None


def _effective(
    cand: Reading, bound: Reading, world: FilesystemWorld, evidence: Evidence | None
) -> tuple[Reading, Reading]:
    """Both readings as the runtime enforces them in ``world``.

    Filesystems: the candidate's upper bound what it may get and its lower what it
    surely gets; the boundary's lower bound every baseline path as present (the same
    environment), its upper bound what it may get. Binaries, with evidence: each exact
    binary as the executables the proxy matches it to (:mod:`prover.runtime.binaries`).
    """
    c, b = world.candidate, world.boundary

    def runtime(policy: Policy, filesystem: Filesystem, existing: bool = False) -> Policy:
        if filesystem is not policy.filesystem:  # built directly: replace() costs more
            policy = Policy(
                filesystem,
                policy.run_as_user,
                policy.run_as_group,
                policy.landlock_compatibility,
                policy.rules,
            )
        if evidence is None:
            return policy
        return with_effective_binaries(policy, evidence, existing=existing)

    cand = replace(
        cand,
        upper=runtime(cand.upper, world.candidate_upper),
        lower=runtime(cand.lower, c.sure, existing=True),
    )
    bound = replace(
        bound,
        upper=runtime(bound.upper, world.boundary_upper),
        lower=runtime(bound.lower, b.assumed),
    )
    return cand, bound


def _filesystem_only(filesystem: Filesystem, like: Policy) -> Policy:
    """``filesystem`` in a policy with no network rules and ``like``'s process and
    Landlock fields: the pipeline then decides the filesystem alone."""
    return replace(like, filesystem=filesystem, rules=())


def _sure_filesystem_exceed(
    first: CheckOutcome,
    cand: Reading,
    budget: Budget,
    evidence: Evidence | None,
    runtime: tuple[FilesystemReading, FilesystemWorld],
) -> CheckOutcome:
    """A filesystem exceed of the candidate's upper bound over the boundary's lower, kept
    only where, in the environment of the witness (its path exists), what the candidate
    surely gets exceeds what the boundary may get; else ``unsupported`` naming the
    runtime's reading it depends on."""
    witness = first.counterexample
    assert isinstance(witness, FilesystemCounterexample)
    files, world = runtime
    like = cand.lower
    for _ in range(2):  # the witness, or the one its own environment gives instead
        there = files.witness_world(world.gpu, witness.path)
        sure = check_models(
            _filesystem_only(there.candidate.sure, like),
            _filesystem_only(there.boundary_upper, like),
            budget,
            evidence,
            past_workdir=True,
        )
        if sure.verdict is not Verdict.EXCEEDS or not isinstance(
            sure.counterexample, FilesystemCounterexample
        ):
            break
        if sure.counterexample == witness:
            return sure
        witness = sure.counterexample
    return CheckOutcome.unsupported(
        ReasonCode.UNRESOLVED_FILESYSTEM_PATH,
        f"filesystem {witness.access} {witness.path} depends on which paths exist in the "
        "sandbox image: the runtime adds baseline paths only where they exist, and under "
        "best_effort builds no Landlock ruleset when none of the candidate's listed paths "
        "exists; set landlock.compatibility: hard_requirement in the candidate, or give "
        "the `paths_exist` facts of the environment evidence",
    )


def _start_outcome(world: FilesystemWorld) -> CheckOutcome | None:
    """The verdict when a sandbox does not start: under ``hard_requirement`` a listed
    path missing from the image stops it (``landlock.rs`` ``try_open_path``)."""
    c, b = world.candidate, world.boundary
    if c.starts is False:
        outcome = CheckOutcome.within(decided_by="filesystem")
        reason = (
            f"the candidate's sandbox does not start: {c.missing} is missing from the image "
            "and Landlock is hard_requirement, so it allows nothing"
        )
        return outcome.model_copy(update={"reason": reason})
    if b.starts is False:
        return CheckOutcome.unsupported(
            ReasonCode.UNRESOLVED_FILESYSTEM_PATH,
            f"the boundary's sandbox does not start: {b.missing} is missing from the image "
            "and Landlock is hard_requirement, so it allows nothing; fix the boundary first",
        )
    return None


def _start_assumptions(world: FilesystemWorld, outcome: CheckOutcome) -> tuple[str, ...]:
    """The declared assumption a verdict rests on where a sandbox may not start: an
    exceed, that the candidate's does; a pass, that the boundary's does."""
    if outcome.verdict is Verdict.EXCEEDS and world.candidate.starts is None:
        side = "candidate"
    elif outcome.verdict is Verdict.WITHIN and world.boundary.starts is None:
        side = "boundary"
    else:
        return ()
    return (
        f"runtime: {side}: assumed: every path it lists exists in the image (under "
        "hard_requirement a missing one stops the sandbox)",
    )


def _other_worlds(
    worlds: tuple[FilesystemWorld, ...],
    cand: Reading,
    budget: Budget,
    evidence: Evidence | None,
) -> CheckOutcome | None:
    """The filesystem decided in the environments besides the main one (a GPU the
    evidence does not rule out); None when within in each."""
    like = cand.upper
    for world in worlds:
        outcome = check_models(
            _filesystem_only(world.candidate_upper, like),
            _filesystem_only(world.boundary.assumed, like),
            budget,
            evidence,
            past_workdir=True,
        )
        if outcome.verdict is not Verdict.WITHIN:
            what = (
                f"filesystem {outcome.counterexample.access} {outcome.counterexample.path}"
                if isinstance(outcome.counterexample, FilesystemCounterexample)
                else "the filesystem"
            )
            return CheckOutcome.unsupported(
                ReasonCode.UNRESOLVED_FILESYSTEM_PATH,
                f"{what} exceeds the boundary if the sandbox has a GPU (the runtime then "
                "adds GPU device paths and makes /proc read-write); give the `gpu` fact of "
                "the environment evidence",
            )
    return None


def _decide(
    cand: Reading,
    bound: Reading,
    budget: Budget,
    evidence: Evidence | None,
    runtime: tuple[FilesystemReading, FilesystemWorld],
) -> CheckOutcome:
    ways = [_effective(c, b, runtime[1], evidence) for c, b in _ways(cand, bound)]
    if len(ways) == 1:
        return _decide_one(*ways[0], budget, evidence, runtime)
    # Within only when within for each way in; one way suffices to exceed.
    outcomes = [_decide_one(c, b, budget, evidence, runtime) for c, b in ways]
    for verdict in (Verdict.EXCEEDS, Verdict.INCONCLUSIVE, Verdict.UNSUPPORTED):
        for outcome in outcomes:
            if outcome.verdict is verdict:
                return outcome
    decided = sorted({part for o in outcomes for part in (o.decided_by or "").split("+") if part})
    return CheckOutcome.within(decided_by="+".join(decided) or None)


def _with_possible_host(
    outcome: CheckOutcome, cand: Reading, bound: Reading, *, exact: bool
) -> CheckOutcome:
    """The exceed with a host its address can belong to.

    The reference model never matches an IP-literal host to anything but the same
    literal; a hostless endpoint (``allowed_ips`` only) matches every host, so the solver
    may name a literal that cannot resolve to the witness's address. Try that address as
    the host, then a plain name; if neither replays, the witness is not published.
    """
    from prover.concrete import allows
    from prover.concrete.ip import host_ip_literal, same_address
    from prover.concrete.witness import network_action as counterexample_action

    witness = outcome.counterexample
    assert isinstance(witness, NetworkCounterexample)
    literal = host_ip_literal(witness.host)
    address = ipaddress.ip_address(witness.destination_ip)
    if literal is None or same_address(address, literal):
        return outcome
    # An IPv6 literal is not a canonical witness host (spec §9.1): a name instead.
    hosts = (str(address), "witness.example") if address.version == 4 else ("witness.example",)
    for host in hosts:
        moved = witness.model_copy(update={"host": host})
        action = counterexample_action(moved)
        if exact:
            real = allows(cand.upper, action) and not allows(bound.lower, action)
        else:
            real = witness_is_real(cand, bound, moved)
        if real:
            return outcome.model_copy(update={"counterexample": moved})
    return CheckOutcome.unsupported(SHAPE, _depends_reason(cand, bound))


_METHODS = ("POST", "PUT", "DELETE", "PATCH", "GET", "HEAD", "OPTIONS")


def _request_is_real(cand: Reading, bound: Reading, witness: NetworkCounterexample) -> bool:
    """The request itself replays (not only its connection): one way in, the
    candidate's lower bound allows it and everything the boundary could allow refuses it."""
    from prover.concrete import allows
    from prover.concrete.witness import network_action as counterexample_action

    action = counterexample_action(witness)
    return not _refused_anyway(cand, action) and any(
        allows(c.lower, action) and not allows(bound_envelope(b), action)
        for c, b in _ways(cand, bound)
    )


def _named(outcome: CheckOutcome, cand: Reading, bound: Reading) -> CheckOutcome:
    """The exceed shown as the same action by a binary of the granting rule, with binary
    identity enforced, when that replays: "any process" reads as "binaries do not
    matter" for a rule that lists them."""
    witness = outcome.counterexample
    assert isinstance(witness, NetworkCounterexample)
    method = witness.method or ""
    if witness.protocol == "rest" and method not in _METHODS:
        # A solver-made method ("A", "P") is hard to read, and only a standard
        # upper-case method opens a plain-HTTP tunnel (``l7/rest.rs`` ``looks_like_http``):
        # a common one if the request itself replays (not merely its connection, as an
        # opaque grant's does).
        for method in _METHODS:
            common = witness.model_copy(update={"method": method})
            if _request_is_real(cand, bound, common):
                witness = common
                outcome = outcome.model_copy(update={"counterexample": common})
                break
    if witness.binary_identity_required:
        return outcome
    from prover.concrete.network import granting_entries
    from prover.concrete.witness import network_action as counterexample_action

    action = counterexample_action(witness)
    # A request that replays stays one that replays (not merely its connection).
    real = _request_is_real if _request_is_real(cand, bound, witness) else witness_is_real
    keys = {entry.rule_key for entry in granting_entries(cand.upper, action)}
    # the lower bound's binaries: those a process surely can be (with evidence, an
    # executable the image lacks is left out there)
    for rule in cand.lower.rules:
        if rule.key not in keys:
            continue
        for binary in rule.binaries:
            if any(char in binary for char in "*?["):
                continue
            named = witness.model_copy(
                update={
                    "binary": binary,
                    "ancestor_binary": binary,
                    "binary_identity_required": True,
                }
            )
            if real(cand, bound, named):
                return outcome.model_copy(update={"counterexample": named})
    return outcome


def _ways(cand: Reading, bound: Reading) -> list[tuple[Reading, Reading]]:
    """Both ways in at once, or each way in alone where a ``tls: skip`` endpoint makes
    a CONNECT tunnel (raw) and plain HTTP through the forward proxy (inspected) differ."""
    if cand.channel == "any" and (cand.skip or bound.skip):
        return [(cand.way(w), bound.way(w)) for w in ("tunnel", "forward")]
    return [(cand, bound)]


def _decide_one(
    cand: Reading,
    bound: Reading,
    budget: Budget,
    evidence: Evidence | None,
    runtime: tuple[FilesystemReading, FilesystemWorld],
) -> CheckOutcome:
    first = check_models(cand.upper, bound.lower, budget, evidence, past_workdir=True)
    if first.verdict is Verdict.WITHIN:
        return _check_opaque(cand, bound, budget, first, evidence)
    if isinstance(first.counterexample, FilesystemCounterexample):
        return _sure_filesystem_exceed(first, cand, budget, evidence, runtime)
    exact = cand.exact and bound.exact and not cand.fail_closed and not cand.restricting
    if first.verdict is Verdict.EXCEEDS and isinstance(first.counterexample, NetworkCounterexample):
        first = _with_possible_host(first, cand, bound, exact=exact)
    if first.reason_code is ReasonCode.INVALID_WITNESS and not exact:
        # A gap between the bounds with no printable witness: look for a real one.
        pass
    elif first.verdict is not Verdict.EXCEEDS or exact:
        return first  # with exact bounds, the reference pipeline's answer stands
    else:
        witness = first.counterexample
        if not isinstance(witness, NetworkCounterexample):
            return first  # process, Landlock and filesystem are read exactly
        if witness_is_real(cand, bound, witness):
            return first
    second = check_models(
        _unfiltered(cand), bound_envelope(bound), budget, evidence, past_workdir=True
    )
    if second.verdict is Verdict.EXCEEDS and isinstance(
        second.counterexample, NetworkCounterexample
    ):
        second = _with_possible_host(second, cand, bound, exact=False)
    if second.verdict is Verdict.EXCEEDS and (
        not isinstance(second.counterexample, NetworkCounterexample)
        or witness_is_real(cand, bound, second.counterexample)
    ):
        return second
    if second.verdict is Verdict.INCONCLUSIVE:
        return second
    return CheckOutcome.unsupported(SHAPE, _depends_reason(cand, bound))


def _unfiltered(reading: Reading) -> Policy:
    """The candidate's lower bound without endpoints on hosts its middlewares may filter
    (fail-closed ones refuse raw traffic there, its own ones may refuse anything): the
    witnesses that are left need no middleware to let them through."""
    selectors = reading.fail_closed + reading.restricting
    if not selectors:
        return reading.lower
    rules = tuple(
        replace(
            rule, endpoints=tuple(e for e in rule.endpoints if not may_select(selectors, e.host))
        )
        for rule in reading.lower.rules
    )
    return replace(reading.lower, rules=rules)


def bound_envelope(reading: Reading) -> Policy:
    """Everything the policy could allow: its upper bound (which already drops the deny
    rules that may not apply) with every opaque endpoint read as raw access."""
    # (an endpoint granting only its connection allows no bytes of its own)
    opaque = {(o.rule_key, o.endpoint_index) for o in reading.opaque if o.key != CONNECTION_ONLY}
    rules = []
    for rule in reading.upper.rules:
        endpoints = tuple(
            replace(e, layer="l4", role="full", deny_rules=(), allow_rules=(), access=None)
            if (rule.key, e.index) in opaque
            else e
            for e in rule.endpoints
        )
        rules.append(replace(rule, endpoints=endpoints))
    return replace(reading.upper, rules=tuple(rules))


def connection_envelope(reading: Reading) -> Policy:
    """Every endpoint of the policy as raw access: the destinations it may reach at all."""
    rules = tuple(
        replace(
            rule,
            endpoints=tuple(
                replace(e, layer="l4", role="full", deny_rules=(), allow_rules=(), access=None)
                for e in rule.endpoints
            ),
        )
        for rule in bound_envelope(reading).rules
    )
    return replace(reading.upper, rules=rules)


def witness_is_real(cand: Reading, bound: Reading, witness: NetworkCounterexample) -> bool:
    """The concrete replay of an extended network witness: either the candidate's lower
    bound allows it and everything the boundary could allow refuses it (both read for
    the same way in), or an opaque
    candidate grant that surely applies accepts its connection and the boundary cannot
    reach that destination at all."""
    if _request_is_real(cand, bound, witness):
        return True
    from prover.concrete import allows
    from prover.concrete.witness import network_action as counterexample_action

    action = counterexample_action(witness)
    return (
        not _refused_anyway(cand, action)
        and _granting(list(cand.opaque), action) is not None
        and not allows(connection_envelope(bound), action)
    )


def _refused_anyway(cand: Reading, action: NetworkAction) -> bool:
    """The runtime never lets ``action`` through, or may not, whatever the grants say."""
    from prover.concrete.ip import host_ip_literal, same_address

    literal = host_ip_literal(action.host)
    if literal is not None and not same_address(action.destination_ip, literal):
        return True  # an IP-literal host cannot resolve to another address
    if action.protocol == "l4" and _fail_closed_selects(cand, action.host):
        return True  # raw (uninspectable) traffic to this host is refused
    return _selects(cand.restricting, action.host)  # a candidate-only middleware may


def _fail_closed_selects(reading: Reading, host: str) -> bool:
    """Whether a fail-closed middleware entry selects the concrete ``host``."""
    return _selects(reading.fail_closed, host)


def _selects(selectors: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...], host: str) -> bool:
    from prover.concrete.glob import host_matches

    name = host.lower()
    return any(
        any(host_matches(p, name) for p in include)
        and not any(host_matches(p, name) for p in exclude)
        for include, exclude in selectors
    )


# -- opaque grants -----------------------------------------------------------------------
def _check_opaque(
    cand: Reading,
    bound: Reading,
    budget: Budget,
    modelled: CheckOutcome,
    evidence: Evidence | None = None,
) -> CheckOutcome:
    """Every opaque candidate grant, class by class, against what covers it."""
    by_key: dict[str, list[Opaque]] = defaultdict(list)
    for grant in cand.opaque:
        by_key[grant.key].append(grant)
    decided = {modelled.decided_by or "structural"}
    for key, grants in by_key.items():
        covering = [o for o in bound.opaque if o.key == key and not o.in_conflict]
        # A bare connection is covered by any boundary endpoint that surely admits it.
        boundary = _as_policy(
            bound.lower,
            covering,
            raw_l4=grants[0].l4_covers,
            any_layer=key == CONNECTION_ONLY,
        )
        candidate = _as_policy(cand.upper, grants, raw_l4=False)
        outcome = check_network(candidate, boundary, budget, evidence)
        if outcome.verdict is Verdict.WITHIN:
            decided.add("opaque")
            continue
        if (
            outcome.verdict is Verdict.EXCEEDS
            and isinstance(outcome.counterexample, NetworkCounterexample)
            and key != CONNECTION_ONLY  # no counterexample form says "a connection only"
        ):
            from prover.concrete import allows
            from prover.concrete.witness import network_action as counterexample_action

            action = counterexample_action(outcome.counterexample)
            grant = _granting(grants, action)
            if (
                grant is not None
                and not _refused_anyway(cand, action)
                and not allows(connection_envelope(bound), action)
            ):
                return replace_reason(
                    outcome,
                    f"candidate rule '{grant.rule_key}' endpoint {grant.endpoint_index} "
                    f"({grant.construct}) reaches a destination the boundary cannot connect to",
                )
        if outcome.verdict is Verdict.INCONCLUSIVE:
            return outcome
        names = ", ".join(
            f"rule '{g.rule_key}' endpoint {g.endpoint_index}" for g in grants[:3]
        ) + (f" and {len(grants) - 3} more" if len(grants) > 3 else "")
        cover = "an identical endpoint" + (" or raw L4 access" if grants[0].l4_covers else "")
        return CheckOutcome.unsupported(
            SHAPE,
            f"candidate {names} ({grants[0].construct}) is not covered by {cover} "
            "in the boundary, and its traffic is not modeled",
        )
    return CheckOutcome.within(decided_by="+".join(sorted(decided)))


def replace_reason(outcome: CheckOutcome, reason: str) -> CheckOutcome:
    return outcome.model_copy(update={"reason": reason, "decided_by": "opaque"})


def _granting(grants: list[Opaque], action: NetworkAction) -> Opaque | None:
    """A candidate grant that surely accepts ``action``'s connection, if any."""
    from prover.concrete import allows

    for grant in grants:
        if grant.in_conflict or not grant.grants_something:
            continue
        alone = Policy(
            filesystem=_NO_FILES,
            rules=(Rule(grant.rule_key, grant.rule_key, grant.binaries, (grant.connection,)),),
        )
        if allows(alone, action):
            return grant
    return None


def _as_policy(
    base: Policy, grants: list[Opaque], *, raw_l4: bool, any_layer: bool = False
) -> Policy:
    """The grants' connections as L4 rules (with ``raw_l4``, also ``base``'s
    unconditional L4 endpoints; with ``any_layer``, the connections of all of them),
    over ``base``'s filesystem and identity."""
    rules: dict[str, list] = defaultdict(list)
    binaries: dict[str, tuple[str, ...]] = {}
    for grant in grants:
        rules[grant.rule_key].append(grant.connection)
        binaries[grant.rule_key] = grant.binaries
    if raw_l4:
        for rule in base.rules:
            for endpoint in rule.endpoints:
                if endpoint.role == "full" and (any_layer or endpoint.layer == "l4"):
                    connection = replace(
                        endpoint, layer="l4", deny_rules=(), allow_rules=(), access=None
                    )
                    rules[rule.key].append(connection)
                    binaries[rule.key] = rule.binaries
    return replace(
        base,
        rules=tuple(
            Rule(key, key, binaries[key], tuple(endpoints)) for key, endpoints in rules.items()
        ),
    )


# -- reasons -----------------------------------------------------------------------------
def _unmatched_middlewares(policy: AuthoredPolicy, other: AuthoredPolicy) -> list[str]:
    """Keys of ``policy``'s middleware entries that ``other`` lacks or writes otherwise."""
    return sorted(
        key
        for key, entry in policy.network_middlewares.items()
        if other.network_middlewares.get(key) != entry
    )


def _names(keys: list[str]) -> str:
    shown = ", ".join(f"'{name}'" for name in keys[:3])
    return shown + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")


def _authority_reason(extra: list[str]) -> str:
    """A candidate-only middleware may add request headers outside the protected list
    (``openshell-supervisor-middleware/src/headers.rs``) and replace request bodies: it can
    add authority, such as an API key, that no policy rule expresses."""
    return (
        f"candidate network middlewares ({_names(extra)}) are not in the boundary and select "
        "hosts the candidate reaches; a middleware may add request headers (credentials) and "
        "replace bodies, an authority the boundary does not grant: remove them or use the "
        "boundary's middlewares as written"
    )


def _middleware_reason(missing: list[str]) -> str:
    return (
        f"boundary network middlewares ({_names(missing)}) are not in the candidate as "
        "written and select hosts the candidate reaches; only identical middlewares are "
        "read as the same authority"
    )


def _depends_reason(cand: Reading, bound: Reading) -> str:
    parts: list[str] = []
    for label, reading in (("candidate", cand), ("boundary", bound)):
        if reading.conflicts:
            shown = "; ".join(reading.conflicts[:2])
            more = f" and {len(reading.conflicts) - 2} more" if len(reading.conflicts) > 2 else ""
            parts.append(f"{label} endpoint selection between {shown}{more}")
    if cand.restricting:
        parts.append(
            "whether the candidate's own network middlewares let its traffic through to "
            "the hosts they select"
        )
    elif cand.fail_closed:
        parts.append("whether a fail-closed network middleware refuses raw traffic")
    constructs = tuple(dict.fromkeys(cand.constructs + bound.constructs))
    if constructs:
        parts.append("how the runtime handles " + ", ".join(constructs[:3]))
    detail = "; ".join(parts) or "constructs outside the reference model"
    return f"network containment depends on {detail}"

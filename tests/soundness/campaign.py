"""Run the soundness campaign: generate a pair, check it, judge it, apply the relations.

``run_pair(seed, index)`` is deterministic; ``run_campaign`` runs a range of indices
(optionally in worker processes) and ``Summary`` aggregates and prints the results.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from prover.api import check_boundary
from prover.results import CheckOutcome, NetworkCounterexample, Verdict
from tests.soundness.metamorphic import default_check, foreign_host, removal, self_containment
from tests.soundness.oracle import Finding, in_reference_model, judge, judge_within, load
from tests.soundness.pairs import PolicyPair, pair_rng, policy_pair
from tests.soundness.runtime import runtime_policy
from tests.soundness.runtime_judge import load_both, runtime_within

#: Pairs a worker process checks before it is replaced by a fresh one.
WORKER_PAIRS = 100


@dataclass(frozen=True)
class Options:
    timeout_ms: int = 10_000
    #: Share of pairs on which each metamorphic relation is also run.
    relation_rate: float = 1.0
    #: Sampled actions tried per ``within`` pair.
    tries: int = 240
    #: Also measure the sampler's power: on every network exceed, would the sampled
    #: actions alone have refuted a false ``within``?
    measure_power: bool = True


@dataclass
class PairResult:
    seed: int
    index: int
    family: str
    verdict: str
    reason_code: str | None
    decided_by: str | None
    seconds: float
    checks: int
    facts: int
    relations: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    #: For a network exceed: whether the action sampler alone refutes a false "within".
    refuted: bool | None = None
    #: The same for an extended pair, with the runtime model's sampler.
    runtime_refuted: bool | None = None
    #: The counterexample's domain (network, filesystem, process, landlock), if any.
    domain: str | None = None


def _label(outcome: CheckOutcome) -> str:
    code = outcome.reason_code.value if outcome.reason_code else ""
    return f"{outcome.verdict.value}/{code}" if code else outcome.verdict.value


def run_pair(seed: int, index: int, options: Options = Options()) -> PairResult:
    """Check pair ``(seed, index)`` and judge it; exceptions become ``crash`` findings."""
    pair = policy_pair(seed, index)
    rng = pair_rng(seed, -index - 1)
    start = time.perf_counter()
    result = PairResult(seed, index, pair.family, "crash", None, None, 0.0, 1, 0)
    try:
        outcome = check_boundary(
            pair.candidate, pair.boundary, timeout_ms=options.timeout_ms
        ).outcome
        result.verdict = outcome.verdict.value
        result.reason_code = outcome.reason_code.value if outcome.reason_code else None
        result.decided_by = outcome.decided_by
        if outcome.counterexample is not None:
            result.domain = outcome.counterexample.domain
        findings, result.facts = judge(
            pair.candidate, pair.boundary, outcome, rng, tries=options.tries
        )
        result.findings += findings
        if (
            options.measure_power
            and isinstance(outcome.counterexample, NetworkCounterexample)
            and in_reference_model(pair.candidate)
            and in_reference_model(pair.boundary)
        ):
            refutation, _ = judge_within(
                load(pair.candidate), load(pair.boundary), rng, options.tries
            )
            result.refuted = bool(refutation)
        elif options.measure_power and isinstance(outcome.counterexample, NetworkCounterexample):
            cand, bound = load_both(pair.candidate, pair.boundary)
            refutation, _, _ = runtime_within(
                runtime_policy(cand), runtime_policy(bound), rng, options.tries
            )
            result.runtime_refuted = bool(refutation)
        _relations(pair, outcome, rng, options, result)
    except Exception as exc:  # the campaign reports crashes instead of stopping
        detail = f"{type(exc).__name__}: {exc}"
        result.findings.append(Finding("crash", detail, pair.candidate, pair.boundary))
    result.seconds = time.perf_counter() - start
    return result


def _relations(
    pair: PolicyPair,
    outcome: CheckOutcome,
    rng: random.Random,
    options: Options,
    result: PairResult,
) -> None:
    """Each metamorphic relation, on a ``relation_rate`` share of the pairs."""
    check = default_check(options.timeout_ms)

    def record(name: str, related: CheckOutcome | None, found: list[Finding]) -> None:
        if related is not None:
            result.relations[name] = _label(related)
            result.findings.extend(found)
            result.checks += 1

    if rng.random() < options.relation_rate:
        record("self", *self_containment(pair.boundary_doc, pair.boundary, rng, check))
    if outcome.verdict is Verdict.WITHIN and rng.random() < options.relation_rate:
        record("removal", *removal(pair.candidate_doc, pair.boundary, rng, check))
    if rng.random() < options.relation_rate:
        record("foreign", *foreign_host(pair.candidate_doc, pair.boundary, rng, check))


def _run_one(args: tuple[int, int, Options]) -> PairResult:
    return run_pair(*args)


def run_campaign(
    seed: int, indices: Iterable[int], options: Options = Options(), jobs: int = 1
) -> Iterator[PairResult]:
    """Results in completion order; ``jobs > 1`` uses spawned worker processes.

    Workers are replaced every ``WORKER_PAIRS`` pairs, so that memory a long run of
    checks keeps (the prover's, or Z3's) is bounded per worker.
    """
    work = [(seed, index, options) for index in indices]
    if jobs <= 1:
        yield from map(_run_one, work)
        return
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    chunk = 4
    with context.Pool(jobs, maxtasksperchild=WORKER_PAIRS // chunk) as pool:
        yield from pool.imap_unordered(_run_one, work, chunksize=chunk)


@dataclass
class Summary:
    pairs: int = 0
    checks: int = 0
    facts: int = 0
    seconds: float = 0.0
    verdicts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    families: Counter[tuple[str, str]] = field(default_factory=Counter)
    decided_by: Counter[str] = field(default_factory=Counter)
    domains: Counter[str] = field(default_factory=Counter)
    relations: Counter[tuple[str, str]] = field(default_factory=Counter)
    findings: list[tuple[int, Finding]] = field(default_factory=list)
    power: Counter[bool] = field(default_factory=Counter)
    runtime_power: Counter[bool] = field(default_factory=Counter)
    wall_seconds: float = 0.0
    slowest: list[tuple[float, int]] = field(default_factory=list)

    def add(self, result: PairResult) -> None:
        self.pairs += 1
        self.checks += result.checks
        self.facts += result.facts
        self.seconds += result.seconds
        self.verdicts[result.verdict] += 1
        if result.reason_code:
            self.reasons[result.reason_code] += 1
        if result.decided_by:
            self.decided_by[result.decided_by] += 1
        if result.domain:
            self.domains[result.domain] += 1
        self.families[(result.family, result.verdict)] += 1
        for relation, label in result.relations.items():
            self.relations[(relation, label)] += 1
        self.findings += [(result.index, f) for f in result.findings]
        if result.refuted is not None:
            self.power[result.refuted] += 1
        if result.runtime_refuted is not None:
            self.runtime_power[result.runtime_refuted] += 1
        self.slowest = sorted([*self.slowest, (result.seconds, result.index)])[-5:]

    @property
    def unsound(self) -> list[tuple[int, Finding]]:
        return [(i, f) for i, f in self.findings if f.unsound]

    @property
    def failing(self) -> list[tuple[int, Finding]]:
        return [(i, f) for i, f in self.findings if f.failing]

    def report(self, seed: int, wall_seconds: float) -> str:
        def share(count: int, total: int) -> str:
            return f"{count:>7}  {100 * count / max(total, 1):5.1f}%"

        lines = [
            f"pairs: {self.pairs}  seed: {seed}  checks: {self.checks}  "
            f"concrete facts: {self.facts}  wall: {wall_seconds:.1f} s  "
            f"cpu in checks: {self.seconds:.1f} s",
            "verdicts:",
            *(f"  {v:<20}{share(c, self.pairs)}" for v, c in self.verdicts.most_common()),
            "reason codes:",
            *(f"  {r:<28}{share(c, self.pairs)}" for r, c in self.reasons.most_common()),
            "counterexample domains:",
            *(f"  {d:<28}{c:>7}" for d, c in self.domains.most_common()),
            "decided by (within/exceeds):",
            *(f"  {d:<28}{c:>7}" for d, c in self.decided_by.most_common()),
            "family x verdict:",
            *(f"  {f:<12}{v:<20}{c:>7}" for (f, v), c in sorted(self.families.items())),
            "metamorphic relations:",
            *(f"  {r:<9}{label:<44}{c:>7}" for (r, label), c in sorted(self.relations.items())),
            f"sampler power: a false 'within' on {self.power[True]} of "
            f"{self.power[True] + self.power[False]} network exceeds would have been refuted "
            f"(runtime model, extended pairs: {self.runtime_power[True]} of "
            f"{self.runtime_power[True] + self.runtime_power[False]})",
            "slowest pairs (s, index): "
            + ", ".join(f"{s:.2f}@{i}" for s, i in reversed(self.slowest)),
            f"unsound findings: {len(self.unsound)}   "
            f"other failing findings: {len(self.failing) - len(self.unsound)}   "
            f"notes: {len(self.findings) - len(self.failing)}",
        ]
        return "\n".join(lines)

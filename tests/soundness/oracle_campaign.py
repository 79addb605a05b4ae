"""The soundness campaign judged by the independent sandbox oracle.

Each pair (seed, index) draws an image and a candidate/boundary pair, runs
``prover.api.check_boundary`` with the image's evidence document, and judges the verdict
with :mod:`tests.soundness.sandbox_oracle.judge`. Pairs the oracle does not model are
counted as skipped with the reason. Findings can be shrunk: parts of either policy are
deleted while the same kind of finding remains.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.soundness.oracle_images import (
    STANDARD_IMAGE,
    describe,
    evidence_document,
    random_image,
)
from tests.soundness.oracle_policies import dump, random_pair
from tests.soundness.sandbox_oracle import Image, Unmodelled
from tests.soundness.sandbox_oracle.judge import Finding, judge

TIMEOUT_MS = 10_000


@dataclass
class PairResult:
    index: int
    verdict: str
    candidate: str
    boundary: str
    image: Image
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None
    evidence: bool = True


def run_prover(
    candidate: str, boundary: str, image: Image, evidence: bool = True
) -> dict[str, Any]:
    from prover.api import check_boundary

    document = evidence_document(image) if evidence else None
    result = check_boundary(candidate, boundary, timeout_ms=TIMEOUT_MS, environment=document)
    return result.outcome.model_dump(mode="json")


def judge_texts(
    candidate: str, boundary: str, image: Image, evidence: bool = True
) -> tuple[str, list[Finding], str | None]:
    """Without evidence only ``within_boundary`` is judged: it must hold in every image,
    this one included, while a witness may rightly hold only in others."""
    outcome = run_prover(candidate, boundary, image, evidence)
    if not evidence and outcome["verdict"] != "within_boundary":
        return outcome["verdict"], [], None
    try:
        return outcome["verdict"], judge(candidate, boundary, image, outcome), None
    except Unmodelled as exc:
        return outcome["verdict"], [], f"unmodelled: {exc}"


def pair_inputs(seed: int, index: int) -> tuple[str, str, Image]:
    rng = random.Random(f"oracle:{seed}:{index}")
    image = random_image(rng)
    candidate, boundary = random_pair(rng)
    return candidate, boundary, image


def run_pair(seed: int, index: int, evidence: bool = True) -> PairResult:
    candidate, boundary, image = pair_inputs(seed, index)
    verdict, findings, skipped = judge_texts(candidate, boundary, image, evidence)
    return PairResult(index, verdict, candidate, boundary, image, findings, skipped, evidence)


def run_corpus_self_pairs() -> Summary:
    """Every real policy checked against itself in the standard image: the only
    possible findings are refusals (a refused policy judged ``within`` itself)."""
    from tests.corpus import corpus_entries

    summary = Summary()
    for index, entry in enumerate(corpus_entries()):
        verdict, findings, skipped = judge_texts(entry.text, entry.text, STANDARD_IMAGE)
        summary.add(
            PairResult(index, verdict, entry.text, entry.text, STANDARD_IMAGE, findings, skipped)
        )
    return summary


# -- shrinking ----------------------------------------------------------------------------


def _deletions(data: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every dict key and list item, outermost first."""
    found: list[tuple] = []
    if isinstance(data, dict):
        for key in data:
            if path == () and key == "version":
                continue
            found.append((*path, key))
            found += _deletions(data[key], (*path, key))
    elif isinstance(data, list):
        for i in range(len(data)):
            found.append((*path, i))
            found += _deletions(data[i], (*path, i))
    return found


def _without(data: Any, path: tuple) -> Any:
    import copy

    out = copy.deepcopy(data)
    target = out
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return out


def shrink(result: PairResult, budget: int = 80) -> tuple[str, str, Finding]:
    """A smaller pair with a finding of the same kind and domain (greedy deletions)."""
    goal = result.findings[0]
    texts = [yaml.safe_load(result.candidate), yaml.safe_load(result.boundary)]
    best = goal
    calls = 0
    improved = True
    while improved and calls < budget:
        improved = False
        for side in (0, 1):
            for path in _deletions(texts[side]):
                if calls >= budget:
                    break
                trial = list(texts)
                try:
                    trial[side] = _without(texts[side], path)
                except (KeyError, IndexError):
                    continue
                calls += 1
                cand, bound = dump(trial[0]), dump(trial[1])
                _, findings, _ = judge_texts(cand, bound, result.image, result.evidence)
                same = [f for f in findings if (f.kind, f.domain) == (goal.kind, goal.domain)]
                if same:
                    texts, best, improved = trial, same[0], True
                    break
            if improved:
                break
    return dump(texts[0]), dump(texts[1]), best


# -- summary ------------------------------------------------------------------------------


def label(finding: Finding, image: Image) -> str:
    """The finding's domain; identities under a driver the evidence cannot name (the
    document assumes Docker's ``USER``) are counted apart."""
    if finding.domain in ("identity", "process") and image.driver not in ("docker", "podman"):
        return f"{finding.domain}[{image.driver}]"
    return finding.domain


@dataclass
class Summary:
    pairs: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    kinds: Counter[tuple[str, str]] = field(default_factory=Counter)
    examples: dict[tuple[str, str], PairResult] = field(default_factory=dict)

    def add(self, result: PairResult) -> None:
        self.pairs += 1
        self.verdicts[result.verdict] += 1
        if result.skipped:
            reason = result.skipped.removeprefix("unmodelled: ")
            self.skipped[reason.split(":")[0].split(" ")[0].rsplit(".", 1)[-1]] += 1
        for finding in result.findings[:1]:
            key = (finding.kind, label(finding, result.image))
            self.kinds[key] += 1
            self.examples.setdefault(key, result)

    @property
    def unsound(self) -> int:
        return sum(n for (kind, _), n in self.kinds.items() if kind == "unsound")

    @property
    def false_exceeds(self) -> int:
        return sum(n for (kind, _), n in self.kinds.items() if kind == "false_exceed")

    @property
    def false_errors(self) -> int:
        return sum(n for (kind, _), n in self.kinds.items() if kind == "false_error")

    def report(self, seed: int) -> str:
        lines = [
            f"oracle campaign: seed {seed}, {self.pairs} pairs",
            f"verdicts: {dict(sorted(self.verdicts.items()))}",
            f"skipped (unmodelled): {sum(self.skipped.values())} {dict(self.skipped)}",
            f"unsound within_boundary: {self.unsound}; "
            f"false exceeds_boundary: {self.false_exceeds}; "
            f"errors on pairs the runtime runs (false rejects): {self.false_errors}",
        ]
        for (kind, domain), n in sorted(self.kinds.items()):
            lines.append(f"  {kind:12} {domain:10} {n}")
        return "\n".join(lines)


def render_example(result: PairResult, shrunk: tuple[str, str, Finding] | None = None) -> str:
    cand, bound, finding = shrunk or (result.candidate, result.boundary, result.findings[0])
    return (
        f"pair {result.index}: prover said {result.verdict}; {finding.kind} ({finding.domain}): "
        f"{finding.detail}\nimage: {describe(result.image)}\n"
        f"candidate:\n{_indent(cand)}\nboundary:\n{_indent(bound)}"
    )


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines())

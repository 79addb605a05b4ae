"""Policy pairs: a boundary and a candidate derived from it, as YAML text.

``policy_pair(seed, index)`` is a pure function of its arguments, so any pair the
campaign reports can be rebuilt from the two numbers it prints.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass

from tests.soundness.documents import Operation, apply
from tests.soundness.extending import EXT_NARROW, EXT_SWAP, EXT_WIDEN
from tests.soundness.generator import Document, Plan, make_plan, policy_document, render
from tests.soundness.narrowing import NARROW
from tests.soundness.shapes import BREAK, LIMITS
from tests.soundness.swapping import SWAP
from tests.soundness.widening import WIDEN

#: Family -> weight. "copy" keeps the candidate equal; "independent" draws an unrelated
#: candidate over the same plan; "shape" and "limit" leave the model on purpose.
FAMILIES: dict[str, int] = {
    "copy": 4,
    "narrow": 30,
    "widen": 20,
    "swap": 20,
    "mixed": 15,
    "independent": 5,
    "shape": 6,
    "limit": 2,
}
_ALL_OPERATIONS: tuple[Operation, ...] = NARROW + WIDEN + SWAP


@dataclass(frozen=True)
class PolicyPair:
    seed: int
    index: int
    family: str
    mutations: tuple[str, ...]
    candidate: str
    boundary: str
    candidate_doc: Document
    boundary_doc: Document


def pair_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"soundness:{seed}:{index}")


def _mutate(
    candidate: Document, boundary: Document, family: str, plan: Plan, rng: random.Random
) -> list[str]:
    if rng.random() < 0.15:
        plan = make_plan(rng)  # additions on ports the boundary's plan does not know
    steps: list[tuple[Operation, ...]] = []
    if family == "narrow":
        steps = [NARROW] * rng.randint(1, 3)
    elif family in ("widen", "swap"):
        steps = [WIDEN if family == "widen" else SWAP] + [NARROW] * rng.randint(0, 1)
    elif family == "mixed":
        steps = [_ALL_OPERATIONS] * rng.randint(2, 4)
    elif family in ("shape", "limit"):
        steps = [NARROW] * rng.randint(0, 1)
    if family in ("narrow", "widen", "swap", "mixed") and rng.random() < 0.25:
        extra = {"narrow": EXT_NARROW, "widen": EXT_WIDEN, "swap": EXT_SWAP}
        steps.append(extra.get(family, EXT_NARROW + EXT_WIDEN + EXT_SWAP))
    labels = [apply(candidate, plan, rng, ops) for ops in steps]
    if family in ("shape", "limit"):
        target = candidate if rng.random() < 0.6 else boundary
        labels.append(apply(target, plan, rng, BREAK if family == "shape" else LIMITS))
    return [label for label in labels if label is not None]


def policy_pair(seed: int, index: int) -> PolicyPair:
    rng = pair_rng(seed, index)
    plan = make_plan(rng)
    boundary = policy_document(rng, plan)
    family = rng.choices(list(FAMILIES), weights=list(FAMILIES.values()))[0]
    if family == "independent":
        candidate = policy_document(rng, plan)
        labels: list[str] = []
    else:
        candidate = copy.deepcopy(boundary)
        labels = _mutate(candidate, boundary, family, plan, rng)
    return PolicyPair(
        seed=seed,
        index=index,
        family=family,
        mutations=tuple(labels),
        candidate=render(candidate, rng),
        boundary=render(boundary, rng),
        candidate_doc=candidate,
        boundary_doc=boundary,
    )

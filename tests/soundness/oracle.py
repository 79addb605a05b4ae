"""Judge one boundary-check outcome against the concrete evaluator.

* ``exceeds_boundary``: the counterexample must replay (candidate allows, boundary
  refuses) and name a real escalation for the process and Landlock domains;
* ``within_boundary``: every sampled action the candidate allows (network and
  filesystem) must be allowed by the boundary, and the process identities and Landlock
  setting must be the same or stronger, as spec §6-§8 require;
* ``inconclusive`` because of an internal error or an undecodable witness, and ``error``
  on a generated (valid) policy, are bugs too, though not unsound ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from prover.concrete import allows
from prover.concrete.canonical import (
    is_canonical_binary,
    is_canonical_host,
    is_canonical_rest_path,
    is_http_token,
)
from prover.concrete.execution import IdentityChange, compare_identity, landlock_weakened
from prover.concrete.witness import WORKDIR, network_action, replays
from prover.extended.check import witness_is_real
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.policy.model import Policy
from prover.policy.normalize import normalize
from prover.policy.shape import shape_problem
from prover.results import (
    CheckOutcome,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
    ReasonCode,
    Verdict,
)
from tests.soundness.actions import filesystem_actions, network_actions
from tests.soundness.runtime_judge import _no_network, judge_runtime_network, load_both

#: Findings that mean a verdict authorised something it must not have.
UNSOUND: frozenset[str] = frozenset(
    {"unsound_within", "replay_failure", "self_exceeds", "removal_exceeds", "foreign_within"}
)
#: Findings that are bugs without being unsound.
BUGS: frozenset[str] = frozenset(
    {"crash", "invalid_witness", "rejected_input", "non_canonical_witness"}
)


@dataclass(frozen=True)
class Finding:
    """One violation, with everything needed to reproduce it."""

    kind: str
    detail: str
    candidate: str
    boundary: str

    @property
    def unsound(self) -> bool:
        return self.kind in UNSOUND

    @property
    def failing(self) -> bool:
        return self.kind in UNSOUND or self.kind in BUGS

    def render(self) -> str:
        return (
            f"[{self.kind}] {self.detail}\n"
            f"--- candidate ---\n{self.candidate.rstrip()}\n"
            f"--- boundary ---\n{self.boundary.rstrip()}\n"
        )


def load(text: str) -> Policy:
    """A policy of the reference model as the default semantics reads it: REST rules
    and requests as OpenShell's engine reads them (issue 25)."""
    return normalize(load_policy(text), engine=True)


def in_reference_model(text: str) -> bool:
    return shape_problem(load_policy(text)) is None


def judge_extended(
    candidate_text: str, boundary_text: str, outcome: CheckOutcome, rng: random.Random, tries: int
) -> tuple[str, str, int]:
    """A pair outside the reference model, judged against the runtime model
    (:mod:`tests.soundness.runtime`, independent of :mod:`prover.extended`): an exceed
    must be allowed by the candidate under every endpoint selection and refused by the
    boundary under every one; a within must hold for every sampled action the candidate
    allows under some selection. Filesystem, process and Landlock are read exactly. The
    extended reading's own bounds are checked too (a witness must be real for them)."""
    candidate, boundary = load_both(candidate_text, boundary_text)
    if outcome.verdict is Verdict.EXCEEDS:
        cex = outcome.counterexample
        if isinstance(cex, NetworkCounterexample):
            problem, _, _ = judge_runtime_network(candidate, boundary, outcome, rng, tries)
            if problem:
                return "replay_failure", f"runtime model: {problem}", 1
            cand, bound = read_policy(candidate), read_policy(boundary)
            if not witness_is_real(cand, bound, cex):
                return "replay_failure", f"extended witness is not real: {cex.model_dump()}", 1
            problem = _witness_problem(cex)
            return ("non_canonical_witness", problem, 1) if problem else ("", "", 1)
        kind, detail = judge_exceeds(_no_network(candidate), _no_network(boundary), outcome)
        return kind, detail, 1
    detail, checked = judge_within(_no_network(candidate), _no_network(boundary), rng, tries)
    if detail:
        return "unsound_within", detail, checked
    detail, note, more = judge_runtime_network(candidate, boundary, outcome, rng, tries)
    if detail:
        return "unsound_within", detail, checked + more
    return ("selection_dependent", note, checked + more) if note else ("", "", checked + more)


def _witness_problem(cex: NetworkCounterexample) -> str | None:
    if not cex.binary_identity_required and (cex.binary or cex.ancestor_binary):
        return "identity-off witness names a binary"
    if cex.binary_identity_required and not (
        cex.binary is not None
        and cex.ancestor_binary is not None
        and is_canonical_binary(cex.binary)
        and is_canonical_binary(cex.ancestor_binary)
    ):
        return "identity-on witness without canonical binaries"
    if not is_canonical_host(cex.host):
        return f"non-canonical host {cex.host!r}"
    if cex.protocol == "rest" and not (
        cex.method is not None
        and is_http_token(cex.method)
        and cex.path is not None
        and is_canonical_rest_path(cex.path)
    ):
        return f"non-canonical REST request {cex.method!r} {cex.path!r}"
    return None


def judge_exceeds(candidate: Policy, boundary: Policy, outcome: CheckOutcome) -> tuple[str, str]:
    """``("", "")`` when the counterexample is genuine, else (kind, detail)."""
    cex = outcome.counterexample
    if cex is None:
        return "replay_failure", "exceeds_boundary without a counterexample"
    if not replays(candidate, boundary, cex):
        return "replay_failure", f"counterexample does not replay: {cex.model_dump()}"
    if isinstance(cex, ProcessCounterexample):
        b, c = getattr(boundary, cex.field), getattr(candidate, cex.field)
        if compare_identity(b, c) is not IdentityChange.ESCALATES_TO_ROOT:
            return "replay_failure", f"process counterexample is not an escalation: {cex}"
    if isinstance(cex, LandlockCounterexample) and not landlock_weakened(boundary, candidate):
        return "replay_failure", f"landlock counterexample is not a weakening: {cex}"
    if isinstance(cex, NetworkCounterexample):
        problem = _witness_problem(cex)
        if problem:
            return "non_canonical_witness", f"{problem}: {network_action(cex)}"
    return "", ""


def judge_within(
    candidate: Policy, boundary: Policy, rng: random.Random, tries: int
) -> tuple[str, int]:
    """The first sampled fact the boundary refuses (as text), and how many were checked."""
    for field in ("run_as_user", "run_as_group"):
        b, c = getattr(boundary, field), getattr(candidate, field)
        if compare_identity(b, c) is not IdentityChange.SAME:
            return f"process {field} boundary={b!r} candidate={c!r}", 0
    if landlock_weakened(boundary, candidate):
        return "landlock weakened", 0
    checked = 0
    for fs_action in filesystem_actions(candidate):
        checked += 1
        if not allows(boundary, fs_action, workdir=WORKDIR):
            return f"filesystem {fs_action}", checked
    for action in network_actions(candidate, boundary, rng, tries=tries):
        checked += 1
        if not allows(boundary, action):
            return f"network {action}", checked
    return "", checked


def judge(
    candidate_text: str,
    boundary_text: str,
    outcome: CheckOutcome,
    rng: random.Random,
    *,
    tries: int = 240,
) -> tuple[list[Finding], int]:
    """Findings for one outcome, and the number of concrete facts checked."""

    def finding(kind: str, detail: str) -> list[Finding]:
        return [Finding(kind, detail, candidate_text, boundary_text)]

    verdict, code = outcome.verdict, outcome.reason_code
    if verdict is Verdict.ERROR:
        if "the OpenShell runtime refuses it" in (outcome.reason or ""):
            # A policy the runtime never runs: never a pass. (Whether the runtime refuses
            # exactly these is tests/prover/runtime/test_mainline_table.py's question.)
            return [], 0
        return finding("rejected_input", outcome.reason or ""), 0
    if verdict is Verdict.INCONCLUSIVE:
        if code is ReasonCode.INVALID_WITNESS:
            return finding("invalid_witness", outcome.reason or ""), 0
        if (outcome.reason or "").startswith("internal error"):
            return finding("crash", outcome.reason or ""), 0
        return [], 0
    if verdict is Verdict.UNSUPPORTED:
        return [], 0
    if not (in_reference_model(candidate_text) and in_reference_model(boundary_text)):
        kind, detail, checked = judge_extended(candidate_text, boundary_text, outcome, rng, tries)
        return (finding(kind, detail) if kind else []), checked
    candidate, boundary = load(candidate_text), load(boundary_text)
    if verdict is Verdict.EXCEEDS:
        kind, detail = judge_exceeds(candidate, boundary, outcome)
        return (finding(kind, detail) if kind else []), 1
    detail, checked = judge_within(candidate, boundary, rng, tries)
    return (finding("unsound_within", detail) if detail else []), checked

"""The campaign's judges must be able to fail: planted unsound verdicts are caught.

Outcomes are fabricated here (a ``within`` for a pair that exceeds, a counterexample that
does not replay, a check function that lies), so each test shows that the corresponding
campaign check would report the problem. The metamorphic relations' premises are checked
concretely: a permuted policy allows exactly what the original allows, and a removal only
takes authority away.
"""

from __future__ import annotations

import copy
import random

import pytest

from prover.concrete import allows
from prover.results import (
    CheckOutcome,
    FilesystemCounterexample,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
    ReasonCode,
    Verdict,
)
from tests.soundness.actions import network_actions
from tests.soundness.generator import render
from tests.soundness.metamorphic import (
    Check,
    foreign_host,
    permuted,
    removal,
    remove_one,
    self_containment,
)
from tests.soundness.oracle import judge, load
from tests.soundness.pairs import pair_rng, policy_pair
from tests.soundness.shrink import shrink

BOUNDARY = """version: 1
filesystem_policy: {include_workdir: false, read_only: [/usr], read_write: [/tmp]}
landlock: {compatibility: hard_requirement}
process: {run_as_user: sandbox, run_as_group: sandbox}
network_policies:
  api:
    endpoints:
      - host: api.example.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /v1/**, query: {page: '*'}}
    binaries: [{path: /usr/bin/curl}]
"""


def variant(old: str, new: str) -> str:
    assert old in BOUNDARY
    return BOUNDARY.replace(old, new)


def network_cex(**fields: object) -> NetworkCounterexample:
    base: dict[str, object] = {
        "binary": None,
        "ancestor_binary": None,
        "binary_identity_required": False,
        "host": "api.example.com",
        "destination_ip": "8.8.8.8",
        "trusted_gateway": False,
        "port": 443,
        "protocol": "rest",
        "method": "POST",
        "path": "/v1/x",
    }
    base.update(fields)
    return NetworkCounterexample.model_validate(base)


WIDER_CANDIDATES = {
    "another method": variant("method: GET", "method: '*'"),
    "no query constraint": variant(", query: {page: '*'}", ""),
    "a wildcard host": variant("host: api.example.com", "host: '*.example.com'"),
    "a glob binary": variant("path: /usr/bin/curl", "path: /usr/bin/*"),
    "another port": variant("port: 443", "ports: [443, 8443]"),
    "a wider path": variant("path: /v1/**", "path: /**"),
    "an L4 endpoint": variant(
        "        protocol: rest\n        enforcement: enforce\n        rules:\n"
        "          - allow: {method: GET, path: /v1/**, query: {page: '*'}}\n",
        "",
    ),
    "a root user": variant("run_as_user: sandbox", "run_as_user: root"),
    "best-effort Landlock": variant("hard_requirement", "best_effort"),
    "a written path": variant("read_write: [/tmp]", "read_write: [/tmp, /etc]"),
}


@pytest.mark.parametrize("candidate", WIDER_CANDIDATES.values(), ids=WIDER_CANDIDATES.keys())
def test_a_false_within_for_a_wider_candidate_is_reported_unsound(candidate: str) -> None:
    findings, checked = judge(candidate, BOUNDARY, CheckOutcome.within(), random.Random(1))
    assert [f.kind for f in findings] == ["unsound_within"]
    assert findings[0].unsound and checked >= 0


@pytest.mark.parametrize("wider", ["8.8.0.0/16", "'::ffff:8.8.8.0/120'", "8.8.8.0/24, 9.9.9.9"])
def test_a_false_within_for_wider_allowed_ips_is_reported_unsound(wider: str) -> None:
    def with_ips(ips: str) -> str:
        return variant("port: 443\n", f"port: 443\n        allowed_ips: [{ips}]\n")

    outcome = CheckOutcome.within()
    findings, _ = judge(with_ips(wider), with_ips("8.8.8.0/24"), outcome, random.Random(1))
    assert [f.kind for f in findings] == ["unsound_within"]


def test_a_true_within_has_no_finding() -> None:
    narrower = variant("path: /v1/**", "path: /v1/models")
    findings, checked = judge(narrower, BOUNDARY, CheckOutcome.within(), random.Random(1))
    assert findings == [] and checked > 20


BOGUS_COUNTEREXAMPLES = {
    "an action the boundary allows": network_cex(method="GET", path="/v1/x"),
    "an action the candidate refuses": network_cex(host="other.example.com"),
    "a process field without escalation": ProcessCounterexample(
        field="run_as_user", boundary="sandbox", candidate="sandbox"
    ),
    "a landlock weakening that is not there": LandlockCounterexample(
        boundary="hard_requirement", candidate="best_effort"
    ),
    "a filesystem write the boundary grants": FilesystemCounterexample(access="write", path="/tmp"),
}


@pytest.mark.parametrize("cex", BOGUS_COUNTEREXAMPLES.values(), ids=BOGUS_COUNTEREXAMPLES.keys())
def test_a_counterexample_that_does_not_replay_is_reported_unsound(cex: object) -> None:
    candidate = variant("method: GET", "method: '*'")
    if isinstance(cex, LandlockCounterexample):
        candidate = BOUNDARY
    findings, _ = judge(candidate, BOUNDARY, CheckOutcome.exceeds(cex), random.Random(1))
    assert [f.kind for f in findings] == ["replay_failure"]


def test_a_genuine_counterexample_has_no_finding() -> None:
    candidate = variant("method: GET", "method: '*'")
    outcome = CheckOutcome.exceeds(network_cex(query_params={"page": ["1"]}))
    assert judge(candidate, BOUNDARY, outcome, random.Random(1))[0] == []


@pytest.mark.parametrize(
    ("outcome", "kind"),
    [
        (CheckOutcome.inconclusive(ReasonCode.INVALID_WITNESS, "no model"), "invalid_witness"),
        (
            CheckOutcome.inconclusive(ReasonCode.SOLVER_UNKNOWN, "internal error during x"),
            "crash",
        ),
        (CheckOutcome.error("invalid candidate policy"), "rejected_input"),
    ],
)
def test_bugs_that_are_not_unsound_are_still_findings(outcome: CheckOutcome, kind: str) -> None:
    findings, _ = judge(BOUNDARY, BOUNDARY, outcome, random.Random(1))
    assert [(f.kind, f.unsound, f.failing) for f in findings] == [(kind, False, True)]


def test_honest_give_ups_are_not_findings() -> None:
    for outcome in (
        CheckOutcome.unsupported(ReasonCode.UNRESOLVED_WORKDIR, "workdir"),
        CheckOutcome.inconclusive(ReasonCode.SOLVER_TIMEOUT, "solver timeout elapsed"),
    ):
        assert judge(BOUNDARY, BOUNDARY, outcome, random.Random(1)) == ([], 0)


def lying(verdict: Verdict) -> Check:
    """A check function for the relations that always answers ``verdict``."""
    outcomes = {
        Verdict.WITHIN: CheckOutcome.within(),
        Verdict.EXCEEDS: CheckOutcome.exceeds(network_cex()),
    }
    return lambda candidate, boundary: outcomes[verdict]


def test_each_metamorphic_relation_reports_a_lying_check() -> None:
    pair = policy_pair(3, 5)
    rng = random.Random(2)
    doc = pair.boundary_doc
    assert self_containment(doc, pair.boundary, rng, lying(Verdict.EXCEEDS))[1][0].unsound
    assert foreign_host(doc, pair.boundary, rng, lying(Verdict.WITHIN))[1][0].unsound
    found = []
    for seed in range(20):
        found += removal(doc, pair.boundary, random.Random(seed), lying(Verdict.EXCEEDS))[1]
    assert found and all(f.kind == "removal_exceeds" for f in found)


@pytest.mark.parametrize("index", range(40))
def test_a_permuted_policy_allows_exactly_what_the_original_allows(index: int) -> None:
    pair = policy_pair(5, index)
    try:
        original = load(pair.boundary)
        shuffled = load(render(permuted(pair.boundary_doc, random.Random(index))))
    except ValueError:
        return  # a shape outside the model: nothing to compare
    rng = pair_rng(5, index)
    for action in network_actions(original, original, rng, tries=80):
        assert allows(shuffled, action)
    for action in network_actions(shuffled, shuffled, rng, tries=80):
        assert allows(original, action)


@pytest.mark.parametrize("index", range(40))
def test_a_removal_only_takes_authority_away(index: int) -> None:
    pair = policy_pair(6, index)
    smaller_doc = copy.deepcopy(pair.candidate_doc)
    if remove_one(smaller_doc, random.Random(index)) is None:
        return
    try:
        original, smaller = load(pair.candidate), load(render(smaller_doc))
    except ValueError:
        return
    for action in network_actions(smaller, original, pair_rng(6, index), tries=80):
        assert allows(original, action), action


def test_shrinking_keeps_the_failure_and_drops_everything_else() -> None:
    pair = policy_pair(4, 9)

    def mentions_version_only_once(candidate: str, boundary: str) -> bool:
        return "version" in candidate

    candidate, boundary = shrink(pair.candidate_doc, pair.boundary_doc, mentions_version_only_once)
    assert candidate == {"version": 1} and boundary == {"version": 1}

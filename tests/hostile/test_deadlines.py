"""Every input of every tool is read inside the call's deadline (issue 14).

Work is counted, never timed: a budget that runs out after a given number of
checkpoints stands for the deadline, and the tests assert how much was read before
the call stopped and what it answered.
"""

from __future__ import annotations

import json

import pytest
from mcp import Client

from prover.api import check_boundary
from prover.explain import document as explain_document
from prover.explain import explain
from prover.proposal import assess_proposal, reading
from prover.proposal.reading import CHECKPOINT_EVERY_EVENTS, read_document
from prover.proposal.registry import load_registry
from prover.run.budget import Budget, BudgetExhausted
from server.app import create_server

POLICY = "version: 1\nfilesystem_policy:\n  read_write: [/sandbox]\n"
PROPOSAL = json.dumps(
    {
        "rule_name": "api",
        "rule": {
            "endpoints": [{"host": "example.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
)
#: Plain YAML side documents of about 1 MB: PyYAML's pure-Python loader used to take
#: seconds on each, outside any budget.
SIDE_DOCUMENTS = {
    "registry": "binaries:\n"
    + "".join(f"- binary: /usr/bin/x{i}\n  description: d\n" for i in range(9_000)),
    "credentials": "credentials:\n"
    + "".join(
        f"- name: c{i}\n  type: token\n  target_hosts: [h{i}.example.com]\n" for i in range(9_000)
    ),
    "accepted_risks": "accepted_risks:\n"
    + "".join(f"- query: capability_expansion\n  reason: r{i}\n" for i in range(9_000)),
}


class CountedBudget(Budget):
    """A budget whose deadline is its ``allowed``-th checkpoint (counted work, no clock)."""

    def __init__(self, allowed: int) -> None:
        super().__init__(60_000)
        self.allowed = allowed
        self.calls = 0

    def checkpoint(self) -> None:
        self.calls += 1
        if self.calls > self.allowed:
            raise BudgetExhausted(cancelled=False)


@pytest.mark.parametrize("name", sorted(SIDE_DOCUMENTS))
def test_a_side_document_is_read_under_the_assessments_budget(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fed = 0
    original = reading._Builder.feed

    def counting_feed(self: reading._Builder, event: object) -> None:
        nonlocal fed
        fed += 1
        original(self, event)  # type: ignore[arg-type]

    load_registry()  # the shipped registry, read once and cached
    monkeypatch.setattr(reading._Builder, "feed", counting_feed)
    budget = CountedBudget(allowed=3)
    with pytest.raises(BudgetExhausted):
        assess_proposal(POLICY, PROPOSAL, budget=budget, **{name: SIDE_DOCUMENTS[name]})
    # Stopped at its third checkpoint: a few thousand events of a document of ~50,000.
    assert 0 < fed <= 3 * CHECKPOINT_EVERY_EVENTS


def test_side_documents_keep_their_limits() -> None:
    many = "[" + ", ".join(["x"] * 10_001) + "]"
    with pytest.raises(Exception, match="more than 10000 items"):
        read_document(many, "credentials")
    deep = "a:\n" + "".join(f"{'  ' * level}b:\n" for level in range(1, 80)) + "  " * 80 + "c\n"
    with pytest.raises(Exception, match="nested too deeply"):
        read_document(deep, "registry")


def test_the_side_document_reader_keeps_the_safe_loaders_scalars() -> None:
    assert read_document("a: yes\nb: 0x10\nc: ~\nd: '1'\ne: 1.5\n", "x") == {
        "a": True,
        "b": 16,
        "c": None,
        "d": "1",
        "e": 1.5,
    }


def test_an_explanation_reads_and_dumps_documents_under_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """510 + 510 REST rules: every read and dump of the fix loop calls the checkpoint."""
    rules = "".join(f"          - allow: {{method: POST, path: /p{i}/*/x}}\n" for i in range(510))

    def policy(method: str) -> str:
        return (
            "version: 1\nnetwork_policies:\n  r:\n    endpoints:\n      - host: api.example.com\n"
            "        port: 443\n        protocol: rest\n        enforcement: enforce\n"
            "        rules:\n"
            + rules.replace("POST", method)
            + "    binaries:\n      - path: /usr/bin/curl\n"
        )

    ticks: list[int] = []
    original = explain_document.tick

    def counting_tick() -> None:
        ticks.append(1)
        original()

    monkeypatch.setattr(explain_document, "tick", counting_tick)
    candidate, boundary = policy("POST"), policy("GET")
    fresh = CountedBudget(allowed=10**9)
    assert check_boundary(candidate, boundary, budget=fresh).outcome.verdict.value == (
        "exceeds_boundary"
    )
    # The fresh check completes; the deadline then falls within the documents' reading.
    budget = CountedBudget(allowed=fresh.calls + 5)
    explanation = explain(candidate, boundary, budget=budget)
    assert ticks  # dumps went through the checkpoint
    assert explanation.result.result == "exceeds_boundary"
    assert explanation.fix_verified is False
    assert explanation.enumeration.complete is False
    assert "time budget ran out" in (explanation.enumeration.stopped_because or "")
    assert budget.calls == budget.allowed + 1  # stopped at the first checkpoint past it


@pytest.mark.anyio
async def test_the_assess_tool_answers_inconclusive_when_its_deadline_passes(
    anyio_backend: str,
) -> None:
    arguments = {
        "current": POLICY,
        "proposal": PROPOSAL,
        "registry": SIDE_DOCUMENTS["registry"] * 4,  # about 2 MB of plain YAML
        "timeout_ms": 1,
    }
    async with Client(create_server()) as client:
        result = await client.call_tool("assess_proposal", arguments)
    assert not result.is_error
    document = result.structured_content
    assert document is not None
    assert document["result"] == "inconclusive"
    assert document["reason_code"] == "solver_timeout"
    assert document["exit_code"] == 3
    assert result.content[0].text.startswith("result: inconclusive\n")


@pytest.mark.anyio
@pytest.mark.parametrize("depth", [5_000, 100_000])
async def test_a_deeply_nested_result_text_is_read_as_unrecognised(
    depth: int, anyio_backend: str
) -> None:
    arguments = {
        "candidate": POLICY,
        "boundary": POLICY,
        "result": '{"a":' * depth + "1" + "}" * depth,
    }
    async with Client(create_server()) as client:
        result = await client.call_tool("explain_counterexample", {**arguments, "detail": "full"})
    assert not result.is_error
    assert result.structured_content is not None
    assert "nested too deeply" in (result.structured_content["prior"] or "")
    prior = result.structured_content["analysis"]["prior_result"]
    assert prior["kind"] == "unrecognised"
    assert "nested too deeply" in prior["note"]


# -- issue 24: the loops that did not look at the deadline ---------------------------


class CountingPath(str):
    """A path that counts the comparisons made with it (hashing stays ``str``'s)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountingPath.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_filesystem_lists_are_compared_in_linear_work() -> None:
    """9,000 paths per side took 2.4 s at a 200 ms deadline: every candidate path was
    compared with every boundary entry. Now each is one set lookup."""
    from prover.checks.filesystem import check_filesystem, workdir_problem
    from prover.policy.model import Filesystem

    count = 600
    CountingPath.compared = 0
    candidate = Filesystem(
        include_workdir=False,
        read_only=tuple(CountingPath(f"/a/r{i}") for i in range(count)),
        read_write=tuple(CountingPath(f"/a/w{i}") for i in range(count)),
    )
    boundary = Filesystem(
        include_workdir=True,
        read_only=tuple(CountingPath(f"/b/r{i}") for i in range(count)),
        read_write=tuple(CountingPath(f"/b/w{i}") for i in range(count)),
    )
    outcome = check_filesystem(candidate, boundary)
    assert outcome is not None and outcome.reason_code is not None
    assert outcome.reason_code.value == "unresolved_filesystem_path"
    assert workdir_problem(candidate, boundary) is not None
    assert CountingPath.compared <= 4 * count  # all pairs: 2 x 600 x 1,200


def _environment_document(symlinks: int, complete: int) -> str:
    return json.dumps(
        {
            "version": 1,
            "symlinks": {f"/l/d{i}/link": f"../d{i + 1}" for i in range(symlinks)},
            "symlinks_complete_beneath": [f"/c/e{i}" for i in range(complete)] + ["/l"],
        }
    )


def _fs_policy(paths: list[str]) -> str:
    return "version: 1\nfilesystem_policy:\n  read_only:\n" + "".join(
        f"    - {path}\n" for path in paths
    )


def test_paths_resolve_without_comparing_every_complete_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 10,000-entry environment document made a check 2.5-3 s late: each path
    component and each fact recorded compared the path with every
    ``symlinks_complete_beneath`` entry."""
    from prover.environment import paths as environment_paths
    from prover.environment.apply import path_covered
    from prover.policy.fspath import is_beneath as original

    calls = 0

    def counting(path: str, ancestor: str) -> bool:
        nonlocal calls
        calls += 1
        return original(path, ancestor)

    # the resolver's module, should it compare paths with is_beneath again
    monkeypatch.setattr(environment_paths, "is_beneath", counting, raising=False)
    monkeypatch.setattr("prover.environment.apply.is_beneath", counting)
    assert path_covered  # the per-entry comparison that remains: policy against policy
    size = 30
    # hard_requirement: under best_effort a candidate none of whose paths surely exists
    # may run without Landlock (prover.runtime), which is not what this counts
    hard = "landlock: {compatibility: hard_requirement}\n"
    candidate = _fs_policy([f"/l/d{i}/link/x" for i in range(size)]) + hard
    boundary = _fs_policy([f"/c/e{i}" for i in range(size)] + ["/l"]) + hard
    result = check_boundary(
        candidate, boundary, environment=_environment_document(10_000, 9_999), timeout_ms=60_000
    )
    assert result.outcome.verdict.value == "within_boundary"
    assert result.receipt.assumptions
    assert calls <= 2 * size * (size + 1)  # policy entries only, never the 10,000


def test_each_path_resolved_with_evidence_reaches_a_checkpoint() -> None:
    size = 200
    # hard_requirement: under best_effort a candidate none of whose paths surely exists
    # may run without Landlock (prover.runtime), which is not what this counts
    hard = "landlock: {compatibility: hard_requirement}\n"
    candidate = _fs_policy([f"/l/d{i}/link/x" for i in range(size)]) + hard
    boundary = _fs_policy([f"/c/e{i}" for i in range(size)] + ["/l"]) + hard
    environment = _environment_document(size + 1, size)
    budget = CountedBudget(allowed=10**9)
    check_boundary(candidate, boundary, budget=budget, environment=environment)
    total = budget.calls
    assert total >= size  # one per candidate path at least
    budget = CountedBudget(allowed=total - size // 2)  # runs out inside the path loop
    stopped = check_boundary(candidate, boundary, budget=budget, environment=environment)
    assert stopped.outcome.reason_code is not None
    assert stopped.outcome.reason_code.value == "solver_timeout"
    assert budget.calls == budget.allowed + 1


@pytest.mark.parametrize("face", ["check", "explain", "assess"])
def test_the_environment_document_is_read_under_the_budget(
    face: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading 10,000 symlinks took some 0.4 s before any deadline applied."""
    from prover.environment import document

    validated = 0
    original = document._Document.model_validate

    def counting(data: object) -> document._Document:
        nonlocal validated
        validated += 1
        return original(data)

    monkeypatch.setattr(document._Document, "model_validate", counting)
    environment = _environment_document(10_000, 9_999)
    budget = CountedBudget(allowed=2)
    if face == "check":
        result = check_boundary(POLICY, POLICY, budget=budget, environment=environment)
        assert result.outcome.reason_code is not None
        assert result.outcome.reason_code.value == "solver_timeout"
    elif face == "explain":
        explanation = explain(POLICY, POLICY, budget=budget, environment=environment)
        assert explanation.result.result == "inconclusive"
    else:
        with pytest.raises(BudgetExhausted):
            assess_proposal(POLICY, PROPOSAL, budget=budget, environment=environment)
    assert validated == 0  # stopped while reading, before the document was validated
    # Past the budget, each later stage stops at its first checkpoint (the explanation's
    # first check reads the unread document again, and stops at once).
    assert budget.calls <= budget.allowed + (3 if face == "explain" else 1)


def test_loading_checks_the_deadline_between_reading_and_building(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At the size limits, normalising 18,000 paths took some 100 ms with no checkpoint
    after the read's last one: a deadline that passed then was noticed only later."""
    from prover.policy import fast, loader

    text = _fs_policy([f"/a/r{i}" for i in range(3000)]) + "# loading stages\n"
    read_calls = 0

    def count(*_: object) -> None:
        nonlocal read_calls
        read_calls += 1

    loader.policy_data(text, count)  # the checkpoints of the read alone
    built = 0
    original = fast.fast_policy

    def counting_fast(data: object) -> object:
        nonlocal built
        built += 1
        return original(data)

    monkeypatch.setattr(fast, "fast_policy", counting_fast)
    budget = CountedBudget(allowed=read_calls)  # runs out right after the read
    with pytest.raises(BudgetExhausted):
        loader.load_policy_pair(text, text + "# other\n", budget.checkpoint)
    assert built == 0


def test_the_explanations_inside_measure_compares_paths_in_linear_work() -> None:
    """With 3,000 paths per side an explanation's fix ranking compared every candidate
    path with every boundary entry for each option (9 million comparisons, some 0.4 s
    past a 200 ms deadline)."""
    from prover.explain.measure import inside_units
    from prover.policy.model import Filesystem, Policy

    count = 600
    CountingPath.compared = 0
    paths = tuple(CountingPath(f"/a/r{i}") for i in range(count))
    policy = Policy(filesystem=Filesystem(False, paths, paths))
    boundary = Policy(filesystem=Filesystem(False, paths, ()))
    assert inside_units(policy, boundary, {}) == 2 * count
    assert CountingPath.compared <= 6 * count  # all pairs: 3 x 600 x 600

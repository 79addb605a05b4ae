"""Enumerating every violation, fixing them in one round, and stopping honestly."""

from __future__ import annotations

from prover.api import check_boundary
from prover.explain import explain
from prover.explain.document import Edit, apply_edit, read_data
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS


def test_three_distinct_violations_are_found_and_fixed_in_one_round() -> None:
    explanation = explain(THREE_VIOLATIONS, BOUNDARY)

    lines = [v.counterexample_line for v in explanation.violations]
    assert len(lines) == 3 and len(set(lines)) == 3
    assert [v.counterexample["domain"] for v in explanation.violations] == [
        "filesystem",
        "network",
        "network",
    ]
    granted = [v.granted_by[0].path for v in explanation.violations]
    assert granted == [
        "filesystem_policy.read_write[0]",
        "network_policies.api.endpoints[0].host",
        "network_policies.web.endpoints[0].host",
    ]
    assert [v.fix_kind for v in explanation.violations] == ["narrow", "narrow", "narrow"]
    assert explanation.fix_verified and explanation.enumeration.complete
    assert explanation.fixed_candidate is not None
    assert (
        check_boundary(explanation.fixed_candidate, BOUNDARY).outcome.verdict == "within_boundary"
    )


def test_the_combined_edits_applied_in_order_give_the_fixed_candidate() -> None:
    explanation = explain(THREE_VIOLATIONS, BOUNDARY)
    assert explanation.fixed_candidate is not None

    # Replay the rendered operations on the original document by their field paths.
    data = read_data(THREE_VIOLATIONS)
    for op in explanation.fix:
        location = _parse(op.path)
        apply_edit(data, Edit(op.op, location, op.old, op.new))
    assert data == read_data(explanation.fixed_candidate)


def _parse(path: str) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    for piece in path.replace("]", "").split("."):
        name, *indices = piece.split("[")
        parts.append(name)
        parts.extend(int(i) for i in indices)
    return tuple(parts)


def test_max_violations_stops_early_and_offers_no_unverified_fix() -> None:
    explanation = explain(THREE_VIOLATIONS, BOUNDARY, max_violations=1)

    assert len(explanation.violations) == 1
    assert explanation.violations[0].fix  # the found violation still has its checked edit
    assert not explanation.fix_verified
    assert explanation.fixed_candidate is None and not explanation.fix
    assert "max_violations=1" in (explanation.enumeration.stopped_because or "")
    assert "more may remain" in explanation.summary


def test_a_tiny_time_budget_never_claims_a_fix() -> None:
    for timeout_ms in (1, 30):
        explanation = explain(THREE_VIOLATIONS, BOUNDARY, timeout_ms=timeout_ms)
        if not explanation.fix_verified:
            assert explanation.fixed_candidate is None and not explanation.fix
        else:  # fast enough after all: then it must really hold
            assert explanation.fixed_candidate is not None
            outcome = check_boundary(explanation.fixed_candidate, BOUNDARY).outcome
            assert outcome.verdict == "within_boundary"


def test_an_unfixable_blocker_after_a_fix_stops_with_its_hint() -> None:
    # The write is an exceed; the symlinked binary under a boundary glob is not fixable.
    candidate = """\
version: 1
filesystem_policy: { read_only: [/tmp], read_write: [/out] }
network_policies:
  n:
    endpoints: [{ host: api.example.com, port: 443 }]
    binaries: [{ path: /usr/bin/curl }]
"""
    boundary = """\
version: 1
filesystem_policy: {read_only: [/usr, /tmp]}
network_policies:
  n:
    endpoints: [{ host: api.example.com, port: 443 }]
    binaries: [{ path: '/usr/bin/*' }]
"""
    explanation = explain(candidate, boundary)

    assert len(explanation.violations) == 1
    assert not explanation.fix_verified and explanation.fixed_candidate is None
    blocker = explanation.blockers[-1]
    assert blocker.reason_code == "unresolved_binary_path"
    assert not blocker.fix
    assert any("/usr/bin/curl" in hint for hint in blocker.rewrite_hints)
    assert "symlink" in (explanation.enumeration.stopped_because or "")
    assert "To continue" in explanation.explanation

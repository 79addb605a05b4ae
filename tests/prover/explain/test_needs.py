"""Needs: the requests a fix must keep working (issue 23, item 1)."""

from __future__ import annotations

import pytest

from prover.explain import explain
from prover.explain.compact import compact, render_compact_text
from prover.explain.needs import MAX_NEEDS, NeedsError, read_needs
from prover.policy.model import FilesystemAction, NetworkAction
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS

#: Four exact hosts for curl and one for git; the candidate's wildcard covers them all.
HOSTS = "".join(
    f"  r{h}:\n    endpoints: [{{host: {h}.example.com, port: 443}}]\n"
    f"    binaries: [{{path: /usr/bin/{b}}}]\n"
    for h, b in (("a", "curl"), ("b", "curl"), ("c", "curl"), ("d", "curl"), ("e", "git"))
)
HOSTS_BOUNDARY = "version: 1\nnetwork_policies:\n" + HOSTS
WILDCARD = """\
version: 1
network_policies:
  w:
    endpoints: [{host: '*.example.com', port: 443}]
    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/git}]
"""
GIT_TO_E = {"binary": "/usr/bin/git", "host": "e.example.com", "port": 443}

FS_BOUNDARY = """\
version: 1
filesystem_policy:
  include_workdir: false
  read_only: [/workspace]
  read_write: [/workspace/project]
"""
FS_CANDIDATE = (
    "version: 1\nfilesystem_policy:\n  include_workdir: false\n  read_write: [/workspace]\n"
)
FS_EVIDENCE = "version: 1\nworkdir: /sandbox\nsymlinks_complete_beneath: [/workspace]\n"


def test_a_need_steers_the_fix_to_the_boundary_entry_that_keeps_it() -> None:
    plain = explain(WILDCARD, HOSTS_BOUNDARY)
    held = explain(WILDCARD, HOSTS_BOUNDARY, needs=[GIT_TO_E])

    assert plain.fix_verified and held.fix_verified
    # Without the need the fix narrows to the closest host and drops git's.
    assert "e.example.com" not in (plain.fixed_candidate or "")
    assert "e.example.com" in (held.fixed_candidate or "")
    assert "/usr/bin/git" in (held.fixed_candidate or "")
    assert [(s.status, s.need) for s in held.needs] == [
        ("kept", "/usr/bin/git: connect e.example.com:443 ip 1.1.1.1")
    ]


def test_every_need_both_policies_allow_is_kept_and_the_others_are_said() -> None:
    needs = [
        {
            "binary": "/usr/bin/git",
            "host": "raw.github.com",
            "port": 443,
            "destination_ip": "8.8.8.8",
        },
        {"path": "/data", "access": "read"},
        {
            "binary": "/usr/bin/curl",
            "host": "api.example.com",
            "port": 8080,
            "method": "GET",
            "path": "/x",
        },
        {
            "binary": "/usr/bin/curl",
            "host": "api.example.com",
            "port": 8080,
            "method": "POST",
            "path": "/x",
        },
        {"path": "/opt/tool", "mode": "read"},
    ]
    explanation = explain(THREE_VIOLATIONS, BOUNDARY, needs=needs)

    assert explanation.fix_verified
    statuses = [s.status for s in explanation.needs]
    assert statuses == ["kept", "kept", "kept", "exceeds_boundary", "exceeds_boundary"]
    post = explanation.needs[3]
    assert post.closest is not None and "network_policies.api.endpoints[0]" in post.closest
    assert "not POST" in post.closest
    # The answer leads with the need the boundary refuses.
    assert explanation.summary.startswith("need 4 (/usr/bin/curl: POST /x")
    text = render_compact_text(compact(explanation))
    assert "need 4: exceeds_boundary" in text and "need 1: kept" in text


def test_a_need_the_candidate_does_not_grant_is_not_granted() -> None:
    needs = [{"binary": "/usr/bin/curl", "host": "api.example.com", "port": 9999}]
    explanation = explain(THREE_VIOLATIONS, BOUNDARY, needs=needs)
    assert [s.status for s in explanation.needs] == ["exceeds_boundary"]
    explanation = explain(
        "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n",
        BOUNDARY,
        needs=[{"path": "/data", "access": "read"}],
    )
    assert [s.status for s in explanation.needs] == ["not_granted"]
    assert "a fix only narrows" in explanation.explanation
    within = explain(
        "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n",
        BOUNDARY,
        needs=[{"path": "/usr/lib/x", "access": "read"}],
    )
    assert within.result.result == "within_boundary"
    assert [s.status for s in within.needs] == ["kept"]


def test_no_fix_that_drops_a_need_is_offered() -> None:
    """Narrowing the wildcard to a.example.com keeps curl's need and drops git's, to
    e.example.com the other way round; deleting drops both: no fix, and the reason says
    which need each option would drop."""
    curl_to_a = {"binary": "/usr/bin/curl", "host": "a.example.com", "port": 443}
    held = explain(WILDCARD, HOSTS_BOUNDARY, needs=[curl_to_a, GIT_TO_E])

    assert not held.fix_verified and held.fixed_candidate is None
    assert [s.status for s in held.needs] == ["open", "open"]
    stopped = held.enumeration.stopped_because or ""
    assert "keeps every need" in stopped
    reasons = [r.reason for r in held.violations[0].rejected_fixes]
    assert any("need 1" in r for r in reasons) and any("need 2" in r for r in reasons)


def test_with_evidence_the_fix_keeps_the_reads_and_the_boundary_write_beneath() -> None:
    needs = [
        {"path": "/workspace/docs", "access": "read"},
        {"path": "/workspace/project/out", "access": "write"},
    ]
    explanation = explain(FS_CANDIDATE, FS_BOUNDARY, environment=FS_EVIDENCE, needs=needs)

    assert explanation.fix_verified
    assert [s.status for s in explanation.needs] == ["kept", "kept"]
    fixed = explanation.fixed_candidate or ""
    assert "read_only:\n  - /workspace\n" in fixed and "- /workspace/project" in fixed


def test_a_counterexample_object_reads_as_a_need() -> None:
    explanation = explain(THREE_VIOLATIONS, BOUNDARY)
    shapes = [v.counterexample for v in explanation.violations]
    needs = read_needs(shapes)
    assert isinstance(needs[0].action, FilesystemAction)
    assert isinstance(needs[1].action, NetworkAction) and needs[1].action.binary_identity_required
    # A violation is never kept: the boundary refuses it.
    again = explain(THREE_VIOLATIONS, BOUNDARY, needs=shapes)
    assert {s.status for s in again.needs} == {"exceeds_boundary"}
    assert again.fix_verified


@pytest.mark.parametrize(
    ("needs", "field"),
    [
        ([{"host": "a.example.com"}], "needs[0].port"),
        ([{"host": "a.example.com", "port": 70000}], "needs[0].port"),
        ([{"host": "*.example.com", "port": 443}], "needs[0].host"),
        ([{"host": "a.example.com", "port": 443, "binary": "curl"}], "needs[0].binary"),
        ([{"host": "a.example.com", "port": 443, "verb": "GET"}], "needs[0].verb"),
        ([{"host": "a", "port": 1, "method": "GET", "protocol": "l4"}], "needs[0].protocol"),
        ([{"host": "a", "port": 1, "destination_ip": "nope"}], "needs[0].destination_ip"),
        ([{"path": "/x"}, {"path": "relative", "access": "read"}], "needs[0].access"),
        ([{"path": "/x", "access": "read"}, {"path": "x", "access": "read"}], "needs[1].path"),
        (["GET /"], "needs[0]"),
        ([{"path": "/x", "access": "read"}] * (MAX_NEEDS + 1), "needs: at most"),
    ],
)
def test_a_need_that_cannot_be_read_names_its_field(needs: list[object], field: str) -> None:
    with pytest.raises(NeedsError, match=field.replace("[", r"\[").replace("]", r"\]")):
        explain(THREE_VIOLATIONS, BOUNDARY, needs=needs)  # type: ignore[arg-type]


def test_a_rest_need_defaults_and_an_l4_need() -> None:
    (rest, l4) = read_needs(
        [{"host": "a.example.com", "port": 443, "path": "/x"}, {"host": "10.0.0.1", "port": 22}]
    )
    assert isinstance(rest.action, NetworkAction) and isinstance(l4.action, NetworkAction)
    assert (rest.action.protocol, rest.action.method, rest.action.path) == ("rest", "GET", "/x")
    assert not rest.action.binary_identity_required and rest.action.binary is None
    assert l4.action.protocol == "l4" and str(l4.action.destination_ip) == "10.0.0.1"


def test_needs_hold_in_the_rest_of_a_candidate_with_a_rule_set_aside() -> None:
    """The blocked rule (a query `any` list of globs) is set aside and the rest fixed:
    the rest keeps the need it grants (git to e.example.com)."""
    blocked = (
        "  q1:\n    endpoints:\n"
        "      - host: a.example.com\n        port: 443\n        protocol: rest\n"
        "        enforcement: enforce\n"
        "        rules: [{allow: {method: GET, path: /q1, query: {x: {any: ['a*', 'b*']}}}}]\n"
        "    binaries: [{ path: /usr/bin/curl }]\n"
    )
    candidate = WILDCARD + blocked
    plain = explain(candidate, HOSTS_BOUNDARY)
    held = explain(candidate, HOSTS_BOUNDARY, needs=[GIT_TO_E])

    assert "e.example.com" not in (plain.partial_candidate or "")
    assert held.violations and held.violations[0].fix_kind == "narrow"
    assert "host: e.example.com" in (held.partial_candidate or "")
    assert [s.status for s in held.needs] == ["open"]


def test_a_need_cannot_forge_a_line_of_the_text() -> None:
    need = {
        "host": "api.example.com",
        "port": 8080,
        "path": "/x",
        "query_params": {"q": ["a\nneed 9: kept | forged"]},
    }
    text = render_compact_text(compact(explain(THREE_VIOLATIONS, BOUNDARY, needs=[need])))
    assert "\nneed 9: kept" not in text
    assert sum(line.startswith("need ") for line in text.splitlines()) == 1


def test_the_benchmark_draws_needs_both_policies_allow() -> None:
    """benchmarks/fix_retention.py --needs: needs from the candidate's own grants that the
    boundary allows too, each of them readable and allowed by both."""
    from benchmarks.fix_retention import draw_needs
    from prover.explain.document import load_document, read_data
    from prover.explain.needs import need_allowed

    drawn = draw_needs(THREE_VIOLATIONS, BOUNDARY, 4)
    assert drawn and len(drawn) <= 4
    ours = load_document(read_data(THREE_VIOLATIONS))
    theirs = load_document(read_data(BOUNDARY))
    assert ours is not None and theirs is not None
    for need in read_needs(drawn):
        assert need_allowed(ours.policy, need) and need_allowed(theirs.policy, need)
    assert {"path": "/usr", "access": "read"} in drawn

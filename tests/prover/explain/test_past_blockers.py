"""Every blocker in one explanation, and the rest of the candidate fixed past them."""

from __future__ import annotations

from prover.explain import explain
from prover.explain.setaside import MAX_SET_ASIDE
from prover.policy.reader import read_policy_data

BOUNDARY = """\
version: 1
network_policies:
  gh:
    endpoints: [{ host: api.github.com, port: 443 }]
    binaries: [{ path: /usr/bin/git }]
"""


def _blocked(name: str) -> str:
    return (
        f"  {name}:\n"
        "    endpoints:\n"
        "      - host: api.github.com\n"
        "        port: 443\n"
        "        protocol: rest\n"
        "        enforcement: enforce\n"
        f"        rules: [{{allow: {{method: GET, path: /{name}, "
        "query: {x: 'a[bc]'}}}]\n"
        "    binaries: [{ path: /usr/bin/git }]\n"
    )


CANDIDATE = (
    "version: 1\nnetwork_policies:\n" + _blocked("q1") + "  gh:\n"
    "    endpoints: [{ host: '*.github.com', port: 443 }]\n"
    "    binaries: [{ path: /usr/bin/git }]\n" + _blocked("q2")
)


def test_every_blocked_rule_is_listed_and_the_rest_is_fixed() -> None:
    explanation = explain(CANDIDATE, BOUNDARY)

    assert explanation.result.result == "unsupported"
    assert not explanation.fix_verified and explanation.fixed_candidate is None
    assert [b.locations[0].split(".")[1] for b in explanation.blockers] == ["q1", "q2"]
    (violation,) = explanation.violations
    assert violation.granted_by[0].path == "network_policies.gh.endpoints[0].host"
    partial = explanation.partial_candidate
    assert partial is not None
    data = read_policy_data(partial)
    # The blocked rules are back, unchanged and in place; the rest carries its fix.
    original = read_policy_data(CANDIDATE)
    assert list(data["network_policies"]) == ["q1", "gh", "q2"]
    assert data["network_policies"]["q1"] == original["network_policies"]["q1"]
    assert data["network_policies"]["gh"]["endpoints"][0]["host"] == "api.github.com"
    assert "2 blocker(s)" in explanation.summary


def test_a_single_blocker_with_nothing_else_reads_as_before() -> None:
    candidate = "version: 1\nnetwork_policies:\n" + _blocked("q1")

    explanation = explain(candidate, BOUNDARY)

    assert len(explanation.blockers) == 1
    assert explanation.partial_candidate is None
    assert explanation.violations == []


def test_the_number_of_rules_set_aside_is_bounded() -> None:
    many = "".join(_blocked(f"q{i}") for i in range(MAX_SET_ASIDE + 2))
    explanation = explain("version: 1\nnetwork_policies:\n" + many, BOUNDARY)

    assert len(explanation.blockers) == MAX_SET_ASIDE + 1
    assert explanation.result.result == "unsupported"


def test_an_exceed_beside_a_shared_entry_outside_the_model_is_reported_not_garbled() -> None:
    """The check leaves out an endpoint both policies have alike (here a numeric
    wildcard host, outside the model) and proves the exceed; the fixes cannot model that
    entry. The explanation used to read "could not decide (exceeds_boundary, None)"."""
    shared = (
        "  any:\n    binaries: [{path: /usr/bin/reach}]\n"
        "    endpoints: [{host: '10.0.*.*', port: 80}]\n"
    )
    boundary = (
        "version: 1\nnetwork_policies:\n" + shared + "  gh:\n    binaries: [{path: /usr/bin/gh}]\n"
        "    endpoints: [{host: api.github.com, port: 443}]\n"
    )
    candidate = boundary.replace("api.github.com", "'*.github.com'")
    explanation = explain(candidate, boundary)

    assert explanation.result.result == "exceeds_boundary"
    assert explanation.result.counterexample is not None
    assert not explanation.fix_verified and explanation.fixed_candidate is None
    assert explanation.summary.startswith("The candidate exceeds the boundary")
    (blocker,) = explanation.blockers
    assert blocker.reason_code == "unsupported_policy_shape"
    assert "rule 'any' uses an IP-literal wildcard" in (blocker.reason or "")
    assert "both policies" in (explanation.enumeration.stopped_because or "")


def test_an_unmodelled_rule_elsewhere_does_not_turn_a_narrowing_into_a_deletion() -> None:
    """Found by an agent: the narrowing's re-check was unsupported because of another
    rule (protocol sql then; an invalid allowed_ips entry here, since the runtime refuses sql
    without rules or access), which every option meets alike, so the rule was deleted."""
    candidate = (
        "version: 1\nnetwork_policies:\n"
        "  db:\n    endpoints: [{host: db.example.com, port: 5432, allowed_ips: [nope]}]\n"
        "    binaries: [{path: /usr/bin/psql}]\n"
        "  api:\n    endpoints: [{host: api.example.com, port: 443, protocol: rest,"
        " enforcement: enforce, access: read-only}]\n"
        "    binaries: [{path: /usr/bin/curl}]\n"
    )
    boundary = (
        "version: 1\nnetwork_policies:\n"
        "  api:\n    endpoints: [{host: api.example.com, port: 443, protocol: rest,"
        " enforcement: enforce, rules: [{allow: {method: GET, path: '/**'}}]}]\n"
        "    binaries: [{path: /usr/bin/curl}]\n"
    )
    explanation = explain(candidate, boundary)

    (violation,) = explanation.violations
    assert violation.fix_kind == "narrow"
    (blocker,) = explanation.blockers
    assert "rule 'db'" in (blocker.reason or "")
    partial = read_policy_data(explanation.partial_candidate or "")["network_policies"]
    assert "api" in partial and "db" in partial
    methods = {r["allow"]["method"] for r in partial["api"]["endpoints"][0]["rules"]}
    assert "GET" in methods


def test_the_rules_set_aside_are_named_beside_the_partial_candidate() -> None:
    """Never silently: the summary and stopped_because name each rule set aside and say
    the partial candidate carries it unchanged and undecided."""
    explanation = explain(CANDIDATE, BOUNDARY)

    stopped = explanation.enumeration.stopped_because or ""
    for text in (explanation.summary, stopped):
        assert "'q1', 'q2'" in text and "unchanged, undecided" in text

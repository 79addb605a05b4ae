"""Issue 25: a REST allow rule the engine never matches adds no method to a finding."""

from __future__ import annotations

from prover.proposal.facts import endpoint_facts, reference_methods
from tests.prover.proposal.helpers import assess, endpoint, rest, rule


def _rest(*allows: dict, host: str = "api.example.com") -> dict:
    return {
        **endpoint(host),
        "protocol": "rest",
        "enforcement": "enforce",
        "rules": [{"allow": allow} for allow in allows],
    }


def test_inert_allow_rules_are_no_labels() -> None:
    found = _rest(
        {"method": "DELETE"},  # no path: opa.rs sends "", path_matches matches nothing
        {"method": "PUT", "path": "/a", "query": {"k": ""}},  # empty glob matches nothing
        {"method": "GET", "path": "/a"},
    )
    assert reference_methods(found) == {"DELETE", "PUT", "GET"}
    facts = endpoint_facts(found)
    assert facts.methods == {"GET"}
    assert not facts.writes


def test_a_proposal_adding_a_pathless_method_adds_no_new_method() -> None:
    current = {"api": rule([rest("api.github.com", 443, "POST")], "/usr/bin/gh")}
    wider = _rest(
        {"method": "GET", "path": "/**"}, {"method": "DELETE", "path": "/**"}, host="api.github.com"
    )
    pathless = _rest({"method": "GET", "path": "/**"}, {"method": "DELETE"}, host="api.github.com")
    methods = {
        path.method
        for finding in assess(current, "api", rule([wider], "/usr/bin/gh")).findings
        for path in finding.paths
    }
    assert "DELETE" in methods  # the finding the path-less rule must not raise
    for finding in assess(current, "api", rule([pathless], "/usr/bin/gh")).findings:
        assert "DELETE" not in {path.method for path in finding.paths}

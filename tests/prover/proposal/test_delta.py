"""The delta keyed without rule names, the suppression rule and ``validation_result``."""

from __future__ import annotations

from prover.proposal.delta import NO_NEW_FINDINGS, finding_delta, validation_result
from prover.proposal.findings import Category, FindingPath, make_finding
from tests.prover.proposal.helpers import assess, endpoint, lines, rest, rule


def path(binary: str, host: str, port: int, method: str = "", rule_key: str = "r") -> FindingPath:
    return FindingPath(
        binary=binary, host=host, port=port, method=method, policy_name=rule_key, mechanism="m"
    )


REACH = Category.CREDENTIAL_REACH_EXPANSION
CAPABILITY = Category.CAPABILITY_EXPANSION


def test_same_gap_under_a_different_rule_name_is_not_new() -> None:
    baseline = (make_finding(REACH, (path("/usr/bin/curl", "h", 443, rule_key="old"),)),)
    candidate = (make_finding(REACH, (path("/usr/bin/curl", "h", 443, rule_key="new"),)),)
    assert finding_delta(baseline, candidate) == ()


def test_same_gap_under_another_rule_name_through_the_library_is_not_new() -> None:
    current = {"first": rule([endpoint("api.github.com", 443)], "/usr/bin/curl")}
    added = rule([endpoint("api.github.com", 443)], "/usr/bin/curl")
    assessment = assess(current, "second", added)
    assert assessment.validation_result == NO_NEW_FINDINGS
    assert assessment.target_rule == "first"


def test_new_port_on_the_same_host_is_new() -> None:
    current = {"a": rule([endpoint("api.github.com", 443)], "/usr/bin/curl")}
    assessment = assess(current, "b", rule([endpoint("api.github.com", 8443)], "/usr/bin/curl"))
    assert lines(assessment) == [
        "credential_reach_expansion: api.github.com:8443 via /usr/bin/curl"
    ]


def test_capability_paths_of_a_new_reach_are_suppressed() -> None:
    candidate = (
        make_finding(REACH, (path("/usr/bin/curl", "h", 443),)),
        make_finding(
            CAPABILITY,
            (path("/usr/bin/curl", "h", 443, "PUT"), path("/usr/bin/gh", "h", 443, "PUT")),
        ),
    )
    delta = finding_delta((), candidate)
    assert [(f.category, [p.binary for p in f.paths]) for f in delta] == [
        (REACH, ["/usr/bin/curl"]),
        (CAPABILITY, ["/usr/bin/gh"]),
    ]
    assert delta[1].description.endswith("(1 path(s).)")


def test_capability_finding_disappears_when_every_path_is_suppressed() -> None:
    candidate = (
        make_finding(REACH, (path("/usr/bin/curl", "h", 443),)),
        make_finding(CAPABILITY, (path("/usr/bin/curl", "h", 443, "PUT"),)),
    )
    assert [f.category for f in finding_delta((), candidate)] == [REACH]


def test_link_local_and_bypass_paths_are_never_suppressed() -> None:
    assessment = assess(
        None,
        "mixed",
        rule(
            [endpoint("169.254.169.254", 80), endpoint("github.com", 443)],
            "/usr/bin/curl",
            "/usr/bin/git",
        ),
    )
    assert lines(assessment) == [
        "link_local_reach: 169.254.169.254:80 via /usr/bin/curl",
        "link_local_reach: 169.254.169.254:80 via /usr/bin/git",
        "l7_bypass_credentialed: github.com:443 via /usr/bin/git",
        "credential_reach_expansion: github.com:443 via /usr/bin/curl",
    ]


def test_count_is_categories_and_lines_are_paths() -> None:
    findings = (
        make_finding(REACH, (path("/usr/bin/curl", "a", 1), path("/usr/bin/curl", "b", 2))),
    )
    assert validation_result(findings) == (
        "prover: 1 new finding\n"
        "  credential_reach_expansion: a:1 via /usr/bin/curl\n"
        "  credential_reach_expansion: b:2 via /usr/bin/curl"
    )


def test_plural_suffix_and_capability_shorthand() -> None:
    findings = (
        make_finding(REACH, (path("/usr/bin/curl", "a", 1),)),
        make_finding(CAPABILITY, (path("/usr/bin/gh", "b", 2, "DELETE"),)),
    )
    assert validation_result(findings) == (
        "prover: 2 new findings\n"
        "  credential_reach_expansion: a:1 via /usr/bin/curl\n"
        "  capability_expansion: DELETE on b:2 via /usr/bin/gh"
    )


def test_no_new_findings_is_the_exact_sentinel() -> None:
    assert validation_result(()) == "prover: no new findings"


def test_existing_method_reuse_is_not_a_capability_expansion() -> None:
    current = {"gh": rule([rest("api.github.com", 443, "PUT", "POST")], "/usr/bin/gh")}
    assessment = assess(current, "gh", rule([rest("api.github.com", 443, "PUT")], "/usr/bin/gh"))
    assert assessment.validation_result == NO_NEW_FINDINGS
    assert assessment.auto_approvable

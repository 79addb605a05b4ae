"""A candidate the runtime refuses is repaired towards the boundary, then fixed (issue 23).

The result stays the original's ``error`` (the runtime never runs it); the refusal is
``blockers[0]``, its ``fix`` the repair edits, which lead the explanation's ``fix``; the
fixed candidate is proved within the boundary, and never compared with the original.
"""

from __future__ import annotations

from typing import Any

from prover.api import check_boundary
from prover.explain import explain
from prover.explain.document import read_data
from prover.explain.repair import repair_refused
from prover.explain.text import render_text
from prover.policy.loader import load_policy

BOUNDARY = """version: 1
filesystem_policy:
  read_only: [/usr, /lib, /etc]
  read_write: [/workspace, /tmp]
process: {run_as_user: sandbox, run_as_group: sandbox}
network_policies:
  gh:
    binaries: [{path: /usr/bin/curl}]
    endpoints: [{host: api.github.com, port: 443}]
"""

#: The issue's candidate: writes /, runs as root, reaches any host.
CANDIDATE = """version: 1
filesystem_policy:
  read_only: [/usr, /lib, /etc]
  read_write: [/]
process: {run_as_user: root, run_as_group: root}
network_policies:
  web:
    binaries: [{path: /usr/bin/curl}]
    endpoints: [{host: '*', port: 443}]
"""

#: The boundary without a process section (the candidates below set none).
NETWORK = BOUNDARY.replace("process: {run_as_user: sandbox, run_as_group: sandbox}\n", "")
CURL = "    binaries: [{path: /usr/bin/curl}]\n"
#: A filesystem section as the boundary's (no filesystem section: an unresolved workdir).
FS = "filesystem_policy:\n  read_only: [/usr, /lib, /etc]\n  read_write: [/workspace, /tmp]\n"


def _fixed(candidate: str, boundary: str = BOUNDARY) -> dict[str, Any]:
    """The verified fix of a refused candidate, checked independently."""
    explanation = explain(candidate, boundary)
    assert explanation.result.result == "error", explanation.summary
    assert explanation.fix_verified, explanation.summary
    assert explanation.fixed_candidate is not None
    load_policy(explanation.fixed_candidate, runtime=True)  # the runtime runs it
    outcome = check_boundary(explanation.fixed_candidate, boundary).outcome
    assert outcome.verdict == "within_boundary"
    return read_data(explanation.fixed_candidate)


def _hosts(data: dict[str, Any]) -> list[str]:
    return [
        endpoint["host"]
        for rule in (data.get("network_policies") or {}).values()
        for endpoint in rule["endpoints"]
    ]


def test_the_issues_candidate_is_repaired_keeping_what_the_boundary_allows() -> None:
    explanation = explain(CANDIDATE, BOUNDARY)
    assert explanation.result.result == "error"
    assert explanation.fix_verified and explanation.fixed_candidate is not None
    fixed = read_data(explanation.fixed_candidate)
    assert fixed["filesystem_policy"] == {
        "read_only": ["/usr", "/lib", "/etc"],
        "read_write": ["/workspace", "/tmp"],
    }
    assert fixed["process"] == {"run_as_user": "sandbox", "run_as_group": "sandbox"}
    assert _hosts(fixed) == ["api.github.com"]
    assert check_boundary(explanation.fixed_candidate, BOUNDARY).outcome.verdict == (
        "within_boundary"
    )
    # The repair edits are listed, paths in the original candidate, and lead fix.
    refusal = explanation.blockers[0]
    assert "the OpenShell runtime refuses it" in (refusal.reason or "")
    repair_paths = [(op.op, op.path, op.old, op.new) for op in refusal.fix]
    assert ("replace", "process.run_as_user", "root", "sandbox") in repair_paths
    assert ("remove", "filesystem_policy.read_write[0]", "/", None) in repair_paths
    assert ("add", "filesystem_policy.read_write[1]", None, "/tmp") in repair_paths
    assert explanation.fix[: len(refusal.fix)] == refusal.fix
    assert "refuses the candidate" in explanation.summary and "repaired" in explanation.summary
    # The original is never claimed compared with: the runtime refuses it.
    assert explanation.verification is not None
    assert explanation.verification.within_boundary.result == "within_boundary"
    assert explanation.verification.narrows_candidate.result == "not_run"
    assert "repaired candidate" in explanation.verification.compared_with
    assert "fixed candidate within the boundary: within_boundary" in render_text(explanation)


def test_the_repaired_candidate_is_fixed_where_it_still_exceeds() -> None:
    """Repairs lead, the fixes of the repaired candidate follow; the narrowing is proved
    against the repaired candidate."""
    candidate = CANDIDATE.replace("/etc]", "/etc, /opt]").replace("port: 443", "ports: [443, 80]")
    explanation = explain(candidate, BOUNDARY)
    assert explanation.fix_verified and explanation.violations
    assert explanation.verification is not None
    assert explanation.verification.compared_with == "the repaired candidate"
    assert explanation.verification.narrows_candidate.result == "within_boundary"
    assert "refuses the original" in (explanation.verification.narrows_candidate.note or "")
    # Grant units in words: what this fix keeps of what there was, never a bare list.
    text = render_text(explanation)
    assert "grant units: this fix keeps " in text and " before it" in text
    assert "deleting the rule outright: " not in text
    fixed = _fixed(candidate)
    assert fixed["network_policies"]["web"]["endpoints"] == [
        {"host": "api.github.com", "ports": [443]}
    ]
    assert "/opt" not in fixed["filesystem_policy"]["read_only"]
    assert "the original" not in explanation.explanation.split("For the repaired")[1].replace(
        "the original candidate", ""
    )


def test_a_writable_root_without_boundary_writes_keeps_landlock_on() -> None:
    """The boundary writes nothing: ``/`` is dropped, and the boundary's reads keep
    Landlock on (both lists empty would run without it)."""
    boundary = "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n"
    candidate = "version: 1\nfilesystem_policy:\n  read_write: [/]\n"
    repair = repair_refused(candidate, boundary)
    assert repair is not None and repair.data is not None
    assert repair.data["filesystem_policy"] == {"read_write": [], "read_only": ["/usr"]}
    fixed = _fixed(candidate, boundary)
    section = fixed["filesystem_policy"]
    assert section.get("read_only") or section.get("read_write")


def test_other_writes_are_kept_beside_the_boundarys_and_bad_paths_named() -> None:
    candidate = (
        "version: 1\nfilesystem_policy:\n  read_only: [/usr, relative/dir]\n"
        "  read_write: [/workspace, /]\n"
    )
    repair = repair_refused(candidate, BOUNDARY)
    assert repair is not None and repair.data is not None
    assert repair.data["filesystem_policy"] == {
        "read_only": ["/usr"],
        "read_write": ["/workspace", "/tmp"],
    }
    assert any("relative/dir" in note and "not absolute" in note for note in repair.notes)


def test_identities_become_the_boundarys_or_are_removed() -> None:
    boundary = "version: 1\nprocess: {run_as_user: sandbox}\n"
    both = "version: 1\nprocess: {run_as_user: sandbox, run_as_group: sandbox}\n"
    candidate = "version: 1\nprocess: {run_as_user: root, run_as_group: 0}\n"
    repair = repair_refused(candidate, boundary)
    assert repair is not None and repair.data is not None
    assert repair.data["process"] == {"run_as_user": "sandbox"}
    assert any("run_as_group '0' removed" in note for note in repair.notes)
    fixed = _fixed(
        "version: 1\n" + FS + "process: {run_as_user: nobody, run_as_group: sandbox}\n",
        both + FS,
    )
    assert fixed["process"]["run_as_user"] == "sandbox"


def test_any_host_and_tld_wildcards_become_the_boundarys_hosts_on_the_same_ports() -> None:
    boundary = (
        "version: 1\nnetwork_policies:\n  b:\n" + CURL + "    endpoints:\n"
        "      - {host: api.github.com, port: 443}\n"
        "      - {host: pypi.org, port: 443}\n"
        "      - {host: example.org, port: 80}\n"
    )
    for host in ("'*'", "'**'", "'*.com'"):
        candidate = (
            "version: 1\nnetwork_policies:\n  web:\n" + CURL + "    endpoints:\n"
            f"      - {{host: {host}, port: 443, tls: skip}}\n"
        )
        fixed = _fixed(candidate, boundary)
        endpoints = fixed["network_policies"]["web"]["endpoints"]
        assert endpoints == [
            {"host": "api.github.com", "port": 443, "tls": "skip"},
            {"host": "pypi.org", "port": 443, "tls": "skip"},
        ], host


def test_a_host_the_boundary_has_nothing_for_is_removed_and_named() -> None:
    boundary = (
        "version: 1\nfilesystem_policy:\n  read_only: [/usr]\nnetwork_policies:\n  b:\n"
        + CURL
        + "    endpoints: [{host: example.org, port: 80}]\n"
    )
    candidate = (
        "version: 1\nfilesystem_policy:\n  read_only: [/usr]\nnetwork_policies:\n  web:\n"
        + CURL
        + "    endpoints: [{host: '*', port: 443}]\n"
    )
    explanation = explain(candidate, boundary)
    assert explanation.fix_verified and explanation.fixed_candidate is not None
    assert (
        "network_policies" not in read_data(explanation.fixed_candidate)
        or not read_data(explanation.fixed_candidate)["network_policies"]
    )
    described = explanation.blockers[0].fix_description or ""
    assert "network_policies.web.endpoints[0] removed (host '*'" in described
    assert "network_policies.web removed" in described
    assert "network_policies.web.endpoints[0] removed" in explanation.explanation
    assert "network_policies.web.endpoints[0] removed (host '*'" in explanation.summary
    hint = explanation.blockers[0].rewrite_hints[0]
    assert hint.startswith("Take fixed_candidate") and "a repair removed" in hint


def test_invalid_ports_are_removed_and_an_endpoint_without_one_with_them() -> None:
    candidate = (
        "version: 1\n" + FS + "network_policies:\n  gh:\n" + CURL + "    endpoints:\n"
        "      - {host: api.github.com, ports: [0, 443]}\n"
        "      - {host: api.github.com, port: 0}\n"
    )
    repair = repair_refused(candidate, NETWORK)
    assert repair is not None and repair.data is not None
    assert repair.data["network_policies"]["gh"]["endpoints"] == [
        {"host": "api.github.com", "ports": [443]}
    ]
    assert any("endpoints[1] removed" in note for note in repair.notes)
    _fixed(candidate, NETWORK)


def test_an_invalid_l7_endpoint_is_removed_and_named() -> None:
    candidate = (
        "version: 1\nfilesystem_policy:\n  read_only: [/usr]\nnetwork_policies:\n  gh:\n"
        + CURL
        + "    endpoints:\n"
        "      - {host: api.github.com, port: 443, protocol: htp}\n"
        "  ok:\n" + CURL + "    endpoints: [{host: api.github.com, port: 443}]\n"
    )
    repair = repair_refused(candidate, NETWORK)
    assert repair is not None and repair.data is not None
    assert "gh" not in repair.data["network_policies"]
    assert any(
        "network_policies.gh.endpoints[0] removed" in note and "unknown protocol 'htp'" in note
        for note in repair.notes
    )
    fixed = _fixed(candidate, NETWORK)
    assert list(fixed["network_policies"]) == ["ok"]


def test_a_refused_boundary_stays_an_error() -> None:
    boundary = BOUNDARY.replace("[/workspace, /tmp]", "[/]")
    explanation = explain(CANDIDATE, boundary)
    assert explanation.result.result == "error"
    assert not explanation.fix_verified and explanation.fixed_candidate is None
    assert explanation.partial_candidate is None and explanation.fix == []
    assert "boundary" in (explanation.result.reason or "")
    assert all(not blocker.fix for blocker in explanation.blockers)
    assert repair_refused(CANDIDATE, boundary) is None


def test_of_two_ambiguous_endpoints_the_later_is_removed_and_named() -> None:
    """Host '*' becomes api.github.com beside an endpoint the author wrote for it with
    another tls: the runtime would find the two ambiguous, so the copy is removed."""
    candidate = (
        "version: 1\n" + FS + "network_policies:\n  a:\n" + CURL + "    endpoints:\n"
        "      - {host: api.github.com, port: 443}\n"
        "  b:\n" + CURL + "    endpoints:\n"
        "      - {host: '*', port: 443, tls: skip}\n"
    )
    explanation = explain(candidate, NETWORK)
    assert explanation.fix_verified and explanation.fixed_candidate is not None
    assert list(read_data(explanation.fixed_candidate)["network_policies"]) == ["a"]
    assert (
        "network_policies.b.endpoints[0] removed (ambiguous beside "
        "network_policies.a.endpoints[0], which is kept" in explanation.summary
    )


def test_what_the_repairs_cannot_mend_is_named_and_no_fix_offered() -> None:
    """Too many paths: no repair guesses which ones the author needs."""
    paths = ", ".join(f"/data/{n}" for n in range(257))
    candidate = f"version: 1\nfilesystem_policy:\n  read_only: [{paths}]\n"
    explanation = explain(candidate, BOUNDARY)
    assert explanation.result.result == "error"
    assert not explanation.fix_verified and explanation.fix == []
    assert explanation.partial_candidate is None
    stopped = explanation.enumeration.stopped_because or ""
    assert stopped.startswith("no repair applies to a policy the runtime still refuses")
    assert "too many filesystem paths (257 > 256)" in stopped


def test_the_reference_semantics_repairs_nothing() -> None:
    explanation = explain(CANDIDATE, BOUNDARY, reference_semantics=True)
    assert all(
        not blocker.fix_description or "repaired" not in blocker.fix_description
        for blocker in explanation.blockers
    )
    assert "refuses the candidate" not in explanation.summary


def test_an_l7_endpoint_without_rules_takes_the_boundarys_on_that_host() -> None:
    boundary = (
        "version: 1\n" + FS + "network_policies:\n  b:\n" + CURL + "    endpoints:\n"
        "      - {host: api.github.com, port: 443, protocol: rest, access: read-only}\n"
    )
    candidate = (
        "version: 1\n" + FS + "network_policies:\n  gh:\n" + CURL + "    endpoints:\n"
        "      - {host: api.github.com, port: 443, protocol: rest}\n"
        "      - {host: pypi.org, port: 443, protocol: rest}\n"
    )
    fixed = _fixed(candidate, boundary)
    assert fixed["network_policies"]["gh"]["endpoints"] == [
        {"host": "api.github.com", "port": 443, "protocol": "rest", "access": "read-only"}
    ]


def test_needs_and_a_given_result_carry_through_the_repair() -> None:
    """Needs are read against the repaired candidate: kept by the fix, or beyond the
    boundary (leading the summary); a given result is compared with the original's."""
    curl = {"binary": "/usr/bin/curl", "host": "api.github.com", "port": 443}
    beyond = {"path": "/home/sandbox", "access": "write"}
    given = {"result": "within_boundary"}
    explanation = explain(CANDIDATE, BOUNDARY, needs=[curl, beyond], result=given)
    assert explanation.fix_verified
    assert [need.status for need in explanation.needs] == ["kept", "exceeds_boundary"]
    assert "need 2 (write /home/sandbox) exceeds the boundary" in explanation.summary
    assert explanation.prior_result is not None and explanation.prior_result.agrees is False
    assert explanation.summary.startswith("Note: ")

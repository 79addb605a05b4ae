"""Meanings and rewrite hints for results the prover could not decide."""

from __future__ import annotations

import pytest

from prover.explain import explain
from prover.explain.hints import blocker_for
from prover.explain.shape_hints import shape_hints
from prover.results import CheckOutcome, ReasonCode


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (ReasonCode.SOLVER_TIMEOUT, "timeout_ms"),
        (ReasonCode.SOLVER_UNKNOWN, "split"),
        (ReasonCode.INVALID_WITNESS, "report"),
        (ReasonCode.CANCELLED, "again"),
    ],
)
def test_each_inconclusive_reason_code_has_a_hint(code: ReasonCode, words: str) -> None:
    blocker = blocker_for(CheckOutcome.inconclusive(code, "x"), {}, {})

    assert blocker.reason_code == code.value
    assert blocker.meaning
    assert any(words in hint for hint in blocker.rewrite_hints)


@pytest.mark.parametrize(
    ("detail", "words"),
    [
        ("uses protocol 'graphql'; only L4 TCP and REST are modeled", "protocol: rest"),
        ("uses REST without enforced inspection", "enforcement: enforce"),
        ("has no unambiguous host and port", "exactly one of port or ports"),
        ("uses an IP-literal shape outside the DNS host model", "allowed_ips"),
        ("mixes REST controls into L4 authority", "protocol: rest"),
        ("has an unsupported REST allow shape", "exactly one of access"),
        ("uses an unsupported REST deny rule", "whole '*'"),
        ("uses authority outside the initial model", "remove the fields"),
        (
            "has allowed_ips entry '0.0.0.0/0' overlapping a runtime always-blocked range",
            "0.0.0.0/0",
        ),
        ("uses an IP literal with explicit TCP semantics", "protocol unset"),
        ("endpoint host contains a non-ASCII literal", "ASCII"),
    ],
)
def test_each_rule_shape_reason_has_its_own_rewrite(detail: str, words: str) -> None:
    hints = shape_hints("candidate", "r", detail)

    assert any(words in hint for hint in hints), hints
    assert all("rule 'r' of the candidate" in hint for hint in hints[:1])


@pytest.mark.parametrize(
    ("detail", "words"),
    [
        (
            "has overlapping endpoints with different allowed_ips; runtime first-endpoint "
            "selection is not modeled",
            "same allowed_ips",
        ),
        (
            "has overlapping exact and wildcard endpoints with different implicit destination "
            "IP modes",
            "same allowed_ips",
        ),
        (
            "contains overlapping L4 and REST endpoints whose inspection selection is not modeled",
            "all REST",
        ),
    ],
)
def test_overlap_reasons_say_how_to_split_or_align_the_endpoints(detail: str, words: str) -> None:
    hints = shape_hints("boundary", None, detail)

    assert any(words in hint and "the boundary" in hint for hint in hints)


def test_an_unsupported_protocol_is_located_in_the_policy() -> None:
    candidate = """\
version: 1
network_policies:
  g:
    endpoints:
      - { host: a.example.com, port: 443 }
      - { host: b.example.com, port: 443, protocol: websocket, enforcement: enforce, access: full }
    binaries: [{ path: /usr/bin/curl }]
"""
    explanation = explain(candidate, "version: 1\n", reference_semantics=True)

    blocker = explanation.blockers[0]
    assert blocker.locations == ["candidate: network_policies.g.endpoints[1].protocol"]
    assert "websocket" in blocker.rewrite_hints[0]


def test_a_process_identity_change_asks_for_the_boundarys_exact_value() -> None:
    explanation = explain(
        "version: 1\nprocess: {run_as_user: '1600'}\n",
        "version: 1\nprocess: {run_as_user: '1500'}\n",
    )

    blocker = explanation.blockers[0]
    assert "process.run_as_user: '1500'" in blocker.rewrite_hints[0]
    assert "accounts" in blocker.meaning
    assert not explanation.fix_verified and explanation.fixed_candidate is None


def test_a_resource_limit_names_the_metric_and_by_how_much() -> None:
    outcome = CheckOutcome.inconclusive(
        ReasonCode.RESOURCE_LIMIT,
        "containment model exceeds resource limit (endpoints=4100, limit=4096)",
    )

    blocker = blocker_for(outcome, {}, {})

    assert "reduce endpoints by at least 4" in blocker.rewrite_hints[0]


def test_a_path_beneath_a_boundary_path_points_to_environment_evidence() -> None:
    boundary = (
        "version: 1\nfilesystem_policy:\n  include_workdir: false\n  read_write: [/workspace]\n"
        "landlock: {compatibility: hard_requirement}\n"
    )
    candidate = boundary.replace("/workspace]", "/workspace/src/pkg]")
    explanation = explain(candidate, boundary)
    (blocker,) = explanation.blockers
    assert blocker.reason_code == "unresolved_filesystem_path"
    # Evidence settles it without taking access from the candidate: the first hint, and
    # the one the compact result shows; it names the MCP argument, not the CLI flag.
    hint = blocker.rewrite_hints[0]
    assert "the `environment` argument" in hint and "--environment" not in hint
    assert "symlinks_complete_beneath" in hint and "/workspace" in hint


@pytest.mark.parametrize(
    ("boundary", "candidate"),
    [
        # A write beneath a boundary path, a path the boundary lacks, a read-only one.
        ("read_write: [/workspace]", "read_write: [/workspace/src/pkg]"),
        ("read_only: [/usr]", "read_only: [/home/sandbox]"),
        ("read_only: [/data]\n  read_write: [/tmp]", "read_write: [/data/x]"),
    ],
)
def test_no_hint_offers_widening_the_boundary(boundary: str, candidate: str) -> None:
    """A parent vetting a subagent's policy must never be told to widen its own policy
    (the boundary): every hint changes the candidate or passes evidence."""
    head = "version: 1\nfilesystem_policy:\n  include_workdir: false\n  "
    explanation = explain(head + candidate + "\n", head + boundary + "\n")
    hints = [h for b in explanation.blockers for h in b.rewrite_hints]
    assert hints
    for hint in hints:
        assert "to the boundary" not in hint and "boundary's read_write" not in hint
        assert "change the boundary" not in hint and "in the boundary's" not in hint


def test_the_command_line_gets_its_own_flags() -> None:
    from prover.explain.hints import cli_words

    blocker = blocker_for(CheckOutcome.inconclusive(ReasonCode.SOLVER_TIMEOUT, "x"), {}, {})
    assert (
        cli_words(blocker.rewrite_hints[0]) == "Run again with a longer time limit (--timeout 30s)."
    )
    assert cli_words("(the `environment` argument)") == "(--environment FILE)"


def test_any_host_says_what_the_runtime_accepts_and_means() -> None:
    candidate = (
        "version: 1\nnetwork_policies:\n  any:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints: [{host: '*', port: 443}]\n"
    )
    boundary = candidate.replace("'*'", "api.github.com")
    # The candidate is repaired (host '*' to the boundary's host); the hint still says
    # what the runtime accepts, after the one to take the repaired fix.
    (blocker,) = explain(candidate, boundary).blockers
    assert blocker.rewrite_hints[0].startswith("Take fixed_candidate")
    hint = blocker.rewrite_hints[1]
    assert "'*' and '**'" in hint and "refuses" in hint
    assert "'*.example.com'" in hint and "'**.example.com'" in hint
    assert "one label" in hint and "TLD" in hint


def test_every_problem_of_a_several_problem_reason_gets_its_own_hint_and_location() -> None:
    # Shape problems of a policy the runtime runs (no port, unknown protocols and host '*'
    # are refused by the runtime: an error naming each, see the next test).
    candidate = (
        "version: 1\nnetwork_policies:\n  gh:\n    binaries: [{path: usr/bin/curl}]\n"
        "    endpoints:\n      - {host: api.github.com, port: 443, path: '/a/../b'}\n"
        "  web:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints: [{host: '10.0.*.*', port: 443}]\n"
    )
    blockers = explain(candidate, "version: 1\n").blockers
    first = blockers[0]  # the check's reason lists all three problems
    assert first.reason is not None and first.reason.count("candidate policy") == 3
    hints = " ".join(first.rewrite_hints)
    assert "absolute paths" in hints and "endpoint path starting with '/'" in hints
    assert "numeric wildcard host" in hints
    assert "candidate: network_policies.gh.binaries[0].path" in first.locations


def test_every_violation_the_runtime_refuses_is_named_in_one_blocker() -> None:
    candidate = (
        "version: 1\nnetwork_policies:\n  gh:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints:\n      - {host: api.github.com, protocol: htp}\n"
        "  web:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints: [{host: '*', port: 443}]\n"
    )
    blockers = explain(candidate, "version: 1\n").blockers
    reason = blockers[0].reason or ""
    assert "the OpenShell runtime refuses it" in reason
    for violation in (
        "network policy 'gh': endpoint 'api.github.com' must declare at least one port",
        "network policy 'gh': endpoint 0 has invalid L7 configuration: unknown protocol 'htp'",
        "network policy 'web': invalid host wildcard '*'",
    ):
        assert violation in reason
    assert any("Fix every violation the runtime names" in h for h in blockers[0].rewrite_hints)


def test_any_host_refused_as_an_input_error_gets_the_same_hint() -> None:
    """Where the runtime's validator refusal is an input error (its own words), the
    any-host hint comes first too."""
    from prover.explain.hints import ANY_HOST_HINT

    reason = (
        "invalid candidate policy: invalid policy: network policy 'any': invalid host "
        "wildcard '**'; middle DNS label wildcards must be the entire label '*' and "
        "recursive '**' is only allowed as the entire first label"
    )
    blocker = blocker_for(CheckOutcome.error(reason), {}, {})
    assert blocker.rewrite_hints[0] == ANY_HOST_HINT
    other = blocker_for(CheckOutcome.error(reason.replace("'**';", "'a.*.com';")), {}, {})
    assert ANY_HOST_HINT not in other.rewrite_hints

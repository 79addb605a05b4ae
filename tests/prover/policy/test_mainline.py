"""The default reading accepts what the mainline runtime parser accepts; the reference
reading stays strict."""

from __future__ import annotations

import pytest

from prover.errors import PolicyLoadError
from prover.policy.loader import load_policy

ACCEPTED_BY_MAINLINE = {
    "comment-only network_policies (upstream skill template)": (
        "version: 1\nnetwork_policies:\n  # add rules here\n",
        "field 'network_policies' must not be null",
    ),
    "null filesystem_policy": (
        "version: 1\nfilesystem_policy: null\n",
        "field 'filesystem_policy' must not be null",
    ),
    "empty filesystem_policy": (
        "version: 1\nfilesystem_policy:\n",
        "field 'filesystem_policy' must not be null",
    ),
    "null process and landlock": (
        "version: 1\nprocess: ~\nlandlock:\n",
        "must not be null",
    ),
    "null network_middlewares": (
        "version: 1\nnetwork_middlewares:\n",
        "field 'network_middlewares' must not be null",
    ),
    "unquoted numeric run_as_user": (
        "version: 1\nprocess: {run_as_user: 1000, run_as_group: 1000}\n",
        "must be a string (got the integer 1000)",
    ),
    "deprecated binaries[].harness": (
        "version: 1\nnetwork_policies:\n  a:\n    endpoints: [{host: a.com, port: 443}]\n"
        "    binaries: [{path: /usr/bin/curl, harness: true}]\n",
        "unknown field 'network_policies.a.binaries[0].harness'",
    ),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED_BY_MAINLINE))
def test_mainline_accepts_and_the_reference_reading_refuses(name: str) -> None:
    text, reference_error = ACCEPTED_BY_MAINLINE[name]
    load_policy(text)
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(text, reference=True)
    assert reference_error in str(caught.value)


def test_null_sections_read_as_absent_with_absent_defaults() -> None:
    policy = load_policy("version: 1\nfilesystem_policy: null\nnetwork_policies:\n")
    assert policy.filesystem_policy is None
    assert policy.network_policies == {}


def test_numeric_identities_read_as_their_decimal_text() -> None:
    policy = load_policy("version: 1\nprocess: {run_as_user: 1000, run_as_group: 0}\n")
    assert policy.process is not None
    assert (policy.process.run_as_user, policy.process.run_as_group) == ("1000", "0")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Only a boolean harness is the deprecated flag; anything else stays an error.
        (
            "version: 1\nnetwork_policies:\n  a:\n    binaries: [{path: /x, harness: yes}]\n",
            "harness",
        ),
        ("version: 1\nprocess: {run_as_user: true}\n", "run_as_user"),
        ("version: 1\nprocess: {run_as_user: 1.5}\n", "run_as_user"),
        ("version: 1\nnetwork_policies: []\n", "network_policies"),
    ],
)
def test_other_shapes_stay_errors_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(text)
    assert message in str(caught.value)


# What the mainline parser reads, recorded with openshell-validate (OpenShell 2f7fb65,
# openshell-policy/src/lib.rs parse_sandbox_policy; openshell-core/src/policy.rs compares
# landlock.compatibility with "hard_requirement" only).


@pytest.mark.parametrize("mode", ["strict", "disabled", "hard_requirment", "''", "5"])
def test_other_landlock_modes_load_as_best_effort_as_the_runtime_reads_them(mode: str) -> None:
    text = f"version: 1\nlandlock: {{compatibility: {mode}}}\n"
    policy = load_policy(text)
    assert policy.landlock is not None and policy.landlock.compatibility == "best_effort"
    with pytest.raises(PolicyLoadError, match=r"landlock\.compatibility"):
        load_policy(text, reference=True)
    hard = load_policy("version: 1\nlandlock: {compatibility: hard_requirement}\n")
    assert hard.landlock is not None and hard.landlock.compatibility == "hard_requirement"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("version: 1\ninference:\n  allowed_routes: [local]\n", "inference"),
        ("version: 1\ncedar_policy: 'permit(principal, action, resource);'\n", "cedar_policy"),
        (
            "version: 1\nnetwork_policies: {n: {endpoints: [{host: a.com, port: 443, "
            "protocol: mcp, mcp: {versions: ['2025-06-18']}}]}}\n",
            "network_policies.n.endpoints[0].mcp.versions",
        ),
        (
            "version: 1\nnetwork_policies: {n: {endpoints: [{host: a.com, port: 443, "
            "protocol: rest, rules: [{allow: {method: GET, query: {q: {glob: x}}}}]}]}}\n",
            "network_policies.n.endpoints[0].rules[0].allow.query.q.glob",
        ),
    ],
)
def test_fields_the_mainline_parser_does_not_know_are_refused(text: str, field: str) -> None:
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(text)
    assert f"unknown field '{field}' in authored policy" in str(caught.value)
    assert caught.value.path == field


def test_the_legacy_inference_section_is_refused_in_both_readings() -> None:
    text = "version: 1\ninference:\n  allowed_routing_hints: [local]\n"
    for reference in (False, True):
        with pytest.raises(PolicyLoadError, match="unknown field 'inference'"):
            load_policy(text, reference=reference)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("version: 1\nfilesystem:\n  read_only: [/usr]\n", "filesystem"),
        (
            "version: 1\nnetwork_middlewares:\n  - {name: guard, middleware: x/guard}\n",
            "network_middlewares",
        ),
    ],
)
def test_earlier_releases_forms_are_refused_as_the_mainline_parser_refuses_them(
    text: str, field: str
) -> None:
    for reference in (False, True):
        with pytest.raises(PolicyLoadError, match=field):
            load_policy(text, reference=reference)


def test_explicit_empty_rule_lists_are_absent_as_in_the_mainline_parser() -> None:
    text = (
        "version: 1\nnetwork_policies: {n: {endpoints: [{host: a.com, port: 443, "
        "protocol: rest, access: full, rules: [], deny_rules: []}]}}\n"
    )
    endpoint = load_policy(text).network_policies["n"].endpoints[0]
    assert endpoint.rules == () and endpoint.deny_rules == ()
    with pytest.raises(PolicyLoadError, match="must not be an empty list"):
        load_policy(text, reference=True)

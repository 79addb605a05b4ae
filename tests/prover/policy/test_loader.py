"""The loader against the acceptance cases, and its guarantee on arbitrary input."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prover.errors import PolicyLoadError
from prover.policy.loader import load_policy, policy_sha256
from prover.policy.schema import AuthoredPolicy
from tests.support import boundary_cases

# For every case expected to be an input error: which side is invalid, and a substring
# naming the problem.
ERROR_CASES: dict[str, tuple[str, str]] = {
    "parse-unknown-top-level-field-error": (
        "candidate",
        "unknown field 'future_authority' in authored policy",
    ),
    "parse-relative-fs-path-error": (
        "candidate",
        "filesystem path 'filesystem_policy.read_only[0]' must be absolute",
    ),
    "parse-duplicate-key-error": ("candidate", "duplicate key 'version' at line 2"),
    "parse-process-unknown-field-error": ("candidate", "unknown field 'process.capabilities'"),
    "parse-landlock-bad-compatibility-error": (
        "candidate",
        "field 'landlock.compatibility' must be 'best_effort' or 'hard_requirement'",
    ),
    "cli-schema-error-metadata-candidate": ("candidate", "unknown field 'metadata'"),
    "cli-schema-error-null-filesystem-candidate": (
        "candidate",
        "field 'filesystem_policy' must not be null",
    ),
    "cli-schema-error-credential-binding-unknown-field-candidate": (
        "candidate",
        "unknown field 'network_policies.n.endpoints[0].credential_binding.future'",
    ),
    "cli-schema-error-mcp-on-rest-candidate": (
        "candidate",
        "'network_policies.n.endpoints[0].mcp' (mcp options) is only valid for protocol mcp",
    ),
    "cli-schema-error-json-duplicate-key-candidate": (
        "candidate",
        "duplicate key 'version' at line 1",
    ),
    "cli-schema-error-json-unknown-field-candidate": (
        "candidate",
        "unknown field 'future_authority'",
    ),
    "cli-schema-error-metadata-boundary": ("boundary", "unknown field 'metadata'"),
}


def _cases(error: bool) -> list[Any]:
    return [
        pytest.param(case, id=case["id"])
        for case in boundary_cases()
        if (case["expect"]["result"] == "error") is error
    ]


def test_every_error_case_of_the_acceptance_file_has_an_expected_message() -> None:
    ids = {case["id"] for case in boundary_cases() if case["expect"]["result"] == "error"}
    assert ids == set(ERROR_CASES)


@pytest.mark.parametrize("case", _cases(error=False))
def test_both_policies_of_every_non_error_case_load(case: dict[str, Any]) -> None:
    assert isinstance(load_policy(case["candidate"]), AuthoredPolicy)
    assert isinstance(load_policy(case["boundary"]), AuthoredPolicy)


@pytest.mark.parametrize("case", _cases(error=True))
def test_every_error_case_is_refused_with_a_message_naming_the_problem(
    case: dict[str, Any],
) -> None:
    side, expected = ERROR_CASES[case["id"]]
    other = "boundary" if side == "candidate" else "candidate"
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(case[side], reference=True)
    assert expected in str(caught.value)
    assert isinstance(load_policy(case[other]), AuthoredPolicy)


def test_policy_sha256_hashes_the_text_as_utf8_bytes() -> None:
    text = "version: 1\nprocess: {run_as_user: 'é'}\n"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert policy_sha256(text) == digest
    assert policy_sha256(text.encode("utf-8")) == digest
    assert policy_sha256("version: 1\n") != digest


def test_policy_sha256_never_raises_even_for_text_that_is_not_utf8() -> None:
    assert len(policy_sha256("\ud800")) == 64
    assert len(policy_sha256(b"\xff")) == 64


FIELD_NAMES = [
    "version",
    "filesystem_policy",
    "read_only",
    "read_write",
    "include_workdir",
    "network_policies",
    "endpoints",
    "binaries",
    "host",
    "port",
    "ports",
    "protocol",
    "rules",
    "allow",
    "query",
    "any",
    "mcp",
    "process",
    "run_as_user",
    "landlock",
    "compatibility",
    "<<",
]

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["/usr", "/a/../b", "rest", "mcp", "*", "best_effort", "1"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=24,
)

YAML_FRAGMENTS = st.lists(
    st.sampled_from(
        [
            "version: 1\n",
            "version:",
            "  ",
            "\t",
            "- ",
            ": ",
            "&a ",
            "*a",
            "!!python/name:os.system ",
            "!!str ",
            "<<: ",
            "{",
            "}",
            "[",
            "]",
            ",",
            '"',
            "'",
            "---\n",
            "...\n",
            "#",
            "\n",
            "network_policies:\n",
            "  r:\n    endpoints:\n      - host: x\n        port: 443\n",
            "filesystem_policy: {read_only: [/usr]}\n",
            "?",
            "|\n",
            ">-\n",
            "\x00",
            "\ufeff",
            "é",
        ]
    ),
    max_size=30,
).map("".join)


def _load_or_refuse(text: str | bytes) -> None:
    try:
        result = load_policy(text)
    except PolicyLoadError as error:
        assert str(error) and "\n" not in str(error)
    else:
        assert isinstance(result, AuthoredPolicy)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200) | YAML_FRAGMENTS)
def test_arbitrary_text_loads_or_raises_only_policy_load_error(text: str) -> None:
    _load_or_refuse(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_load_or_raise_only_policy_load_error(data: bytes) -> None:
    _load_or_refuse(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES, st.booleans())
def test_arbitrary_structured_documents_load_or_raise_only_policy_load_error(
    value: object, with_version: bool
) -> None:
    if with_version and isinstance(value, dict):
        value = {"version": 1, **value}
    _load_or_refuse(json.dumps(value))


def test_load_errors_escape_control_characters_from_the_input() -> None:
    with pytest.raises(PolicyLoadError) as caught:
        load_policy('version: 1\nfilesystem_policy: {read_only: ["rel\\x1b[31m\\npath"]}\n')
    message = str(caught.value)
    assert "\x1b" not in message and "\n" not in message
    assert "rel\\u{1b}[31m\\npath" in message

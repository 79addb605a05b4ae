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


def test_a_misspelt_landlock_mode_is_refused_with_the_reason_we_are_stricter() -> None:
    with pytest.raises(PolicyLoadError) as caught:
        load_policy("version: 1\nlandlock: {compatibility: hard_requirment}\n")
    message = str(caught.value)
    assert "landlock.compatibility" in message
    assert "silently treats other values as best_effort" in message


LEGACY_INFERENCE = "version: 1\ninference:\n  allowed_routes: [local]\n"


def test_the_legacy_inference_section_loads_by_default_only() -> None:
    policy = load_policy(LEGACY_INFERENCE)
    assert policy.inference is not None and policy.inference.allowed_routes == ("local",)
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(LEGACY_INFERENCE, reference=True)
    assert "unknown field 'inference'" in str(caught.value)
    with pytest.raises(PolicyLoadError):
        load_policy("version: 1\ninference: {allowed_routes: [local], extra: 1}\n")


def test_legacy_routing_hints_are_the_routes_under_their_earlier_name() -> None:
    from prover.api import check_boundary

    hints = "version: 1\ninference:\n  allowed_routing_hints: [local, cloud]\n"
    routes = "version: 1\ninference:\n  allowed_routes: [local]\n"
    assert check_boundary(routes, hints).outcome.verdict.value == "within_boundary"
    assert check_boundary(hints, routes).outcome.verdict.value == "unsupported"


def test_the_first_releases_filesystem_section_name() -> None:
    policy = load_policy("version: 1\nfilesystem:\n  read_only: [/usr]\n")
    assert policy.filesystem_policy is not None
    assert policy.filesystem_policy.read_only == ("/usr",)
    with pytest.raises(PolicyLoadError, match="filesystem"):
        load_policy("version: 1\nfilesystem: {}\nfilesystem_policy: {}\n")
    with pytest.raises(PolicyLoadError, match="filesystem"):
        load_policy("version: 1\nfilesystem: {read_only: [/usr]}\n", reference=True)


def test_middlewares_in_their_earlier_list_form() -> None:
    listed = (
        "version: 1\nnetwork_middlewares:\n"
        "  - {name: guard, middleware: example/content-guard, on_error: fail_closed}\n"
    )
    mapped = (
        "version: 1\nnetwork_middlewares:\n"
        "  guard: {name: guard, middleware: example/content-guard, on_error: fail_closed}\n"
    )
    assert load_policy(listed) == load_policy(mapped)
    two = load_policy(
        "version: 1\nnetwork_middlewares:\n"
        "  - {name: b, middleware: x/one}\n  - {name: a, middleware: x/two}\n"
    )
    assert [(k, m.order) for k, m in two.network_middlewares.items()] == [("b", 0), ("a", 1)]
    with pytest.raises(PolicyLoadError, match="network_middlewares"):
        load_policy("version: 1\nnetwork_middlewares:\n  - {middleware: x/one}\n")

"""The binary capability registry: shipped entries, lookup order and overrides."""

from __future__ import annotations

import pytest

from prover.errors import ProposalError
from prover.proposal.registry import UNKNOWN_DESCRIPTION, load_registry

SHIPPED = {
    "/usr/local/bin/claude": (True, True, False),
    "/usr/bin/curl": (True, True, False),
    "/usr/bin/gh": (True, True, False),
    "/usr/bin/git": (True, False, True),
    "/usr/bin/nc": (True, False, True),
    "/usr/local/bin/node": (True, True, False),
    "/usr/local/bin/python3.13": (True, True, False),
    "/usr/bin/ssh": (True, False, True),
    "/usr/bin/wget": (True, True, False),
}


@pytest.mark.parametrize(("path", "facts"), SHIPPED.items())
def test_shipped_registry_matches_the_reference_table(
    path: str, facts: tuple[bool, bool, bool]
) -> None:
    capability = load_registry().lookup(path)
    assert (
        capability.can_exfiltrate,
        capability.can_construct_http,
        capability.bypasses_l7,
    ) == facts
    assert capability.description != UNKNOWN_DESCRIPTION


@pytest.mark.parametrize(
    "path",
    [
        "/usr/bin/node",
        "/usr/bin/python3",
        "/usr/local/bin/gh",
        "/usr/local/bin/git",
        "/usr/lib/git-core/git-remote-http",
    ],
)
def test_near_miss_paths_are_unknown_binaries(path: str) -> None:
    capability = load_registry().lookup(path)
    assert capability.description == UNKNOWN_DESCRIPTION
    assert (capability.can_exfiltrate, capability.can_construct_http, capability.bypasses_l7) == (
        True,
        True,
        False,
    )


def test_registry_glob_entry_matches_policy_paths() -> None:
    registry = load_registry(
        "binary: /opt/tools/*\ncan_exfiltrate: true\nprotocols: [{name: raw, bypasses_l7: true}]"
    )
    assert registry.lookup("/opt/tools/sub/tunnel").bypasses_l7


def test_policy_glob_takes_the_union_of_matched_entries() -> None:
    registry = load_registry()
    assert registry.lookup("/usr/bin/*").bypasses_l7
    assert not registry.lookup("/usr/local/bin/*").bypasses_l7
    assert registry.lookup("/opt/*").description == UNKNOWN_DESCRIPTION


def test_override_replaces_and_extends_entries() -> None:
    registry = load_registry(
        "binaries:\n"
        "  - {binary: /usr/bin/curl, can_exfiltrate: false}\n"
        "  - {binary: /usr/bin/socat, can_exfiltrate: true,\n"
        "     protocols: [{name: tcp, bypasses_l7: true}]}\n"
    )
    assert not registry.lookup("/usr/bin/curl").can_exfiltrate
    assert registry.lookup("/usr/bin/socat").bypasses_l7
    assert registry.lookup("/usr/bin/git").bypasses_l7


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{binary: /a, bypass_l7: true}]", "registry field '[0].bypass_l7': unknown field"),
        ("{binary: /a, can_exfiltrate: 'yes'}", "registry field 'can_exfiltrate'"),
        ("binaries: {binary: /a}", "registry field 'binaries': expected a list"),
        ("{binaries: [], extra: 1}", "registry field 'extra': unknown field"),
        ("42", "registry: expected a binary descriptor"),
        ("{binary: '  '}", "must not be empty"),
        (
            "{binary: /a, protocols: [{actions: [{type: delete}]}]}",
            "registry field 'protocols[0].actions[0].type'",
        ),
    ],
)
def test_bad_override_is_invalid_input(text: str, message: str) -> None:
    with pytest.raises(ProposalError) as raised:
        load_registry(text)
    assert message in str(raised.value)

"""The credential document: accepted spellings, closed entries, host matching."""

from __future__ import annotations

import pytest

from prover.errors import ProposalError
from prover.proposal.credentials import load_credentials

REFERENCE_FILE = """
credentials:
  - name: github-pat
    type: github-pat
    scopes: [repo]
    injected_via: GITHUB_TOKEN
    target_hosts: [api.github.com, github.com]
"""


def test_reference_cli_file_and_bare_list_are_both_accepted() -> None:
    full = load_credentials(REFERENCE_FILE)
    bare = load_credentials(
        '[{"name": "github-pat", "type": "github", "target_hosts": ["api.github.com"]}]'
    )
    assert full.credentials[0].scopes == ("repo",)
    assert [c.name for c in full.for_host("API.GITHUB.COM")] == ["github-pat"]
    assert [c.name for c in bare.for_host("*.github.com")] == ["github-pat"]
    assert bare.for_host("github.com") == ()


@pytest.mark.parametrize("text", [None, "", "credentials: []", "[]"])
def test_absent_or_empty_documents_mean_no_credentials(text: str | None) -> None:
    assert load_credentials(text).credentials == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[{name: a, target_host: [x.com]}]",
            "credentials field 'credentials[0].target_host': unknown field",
        ),
        ("[{name: a, target_hosts: x.com}]", "credentials field 'credentials[0].target_hosts'"),
        ("42", "credentials: expected"),
        ("{credentials: [], other: 1}", "unknown field"),
    ],
)
def test_malformed_credentials_are_invalid_input(text: str, message: str) -> None:
    with pytest.raises(ProposalError) as raised:
        load_credentials(text)
    assert message in str(raised.value)

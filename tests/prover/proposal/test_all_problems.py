"""A proposal's side documents report every problem at once, in an agent's words."""

from __future__ import annotations

import pytest

from prover.errors import ProposalError
from prover.proposal.assess import assess_proposal

PROPOSAL = (
    '{"rule_name": "r", "rule": {"endpoints": [{"host": "a.com", "port": 443}], '
    '"binaries": [{"path": "/usr/bin/curl"}]}}'
)


def test_a_string_where_a_list_belongs_says_list() -> None:
    credentials = '[{"name": "a", "type": "api_key", "target_hosts": "x.com"}]'
    with pytest.raises(ProposalError) as caught:
        assess_proposal("version: 1", PROPOSAL, credentials=credentials)
    message = str(caught.value)
    assert "credentials[0].target_hosts" in message and "valid list" in message
    assert "tuple" not in message.lower()


def test_every_problem_of_the_credentials_in_one_error() -> None:
    credentials = '[{"name": "a", "type": 5, "target_hosts": "x.com", "bogus": 1}]'
    with pytest.raises(ProposalError) as caught:
        assess_proposal("version: 1", PROPOSAL, credentials=credentials)
    message = str(caught.value)
    assert message.startswith("credentials: 3 problems: ")
    for field in ("credentials[0].type", "credentials[0].target_hosts", "credentials[0].bogus"):
        assert field in message


def test_every_problem_of_the_proposed_rule_in_one_error() -> None:
    proposal = (
        '{"rule_name": "r", "rule": {"endpoints": [{"hots": "a.com", "port": 443, '
        '"acces": "read-only"}], "binaries": "/usr/bin/pip"}}'
    )
    with pytest.raises(ProposalError) as caught:
        assess_proposal("version: 1", proposal)
    message = str(caught.value)
    assert message.startswith("proposal: 3 problems: ")
    for part in ("rule.endpoints[0].hots", "rule.endpoints[0].acces", "'rule.binaries'"):
        assert part in message


def test_every_problem_of_an_environment_document_in_one_error() -> None:
    from prover.environment.document import EnvironmentLoadError, load_environment

    with pytest.raises(EnvironmentLoadError) as caught:
        load_environment("version: 1\nusers: {sandbox: abc}\nsymlink: {}\n")
    message = str(caught.value)
    assert "2 problems" in message and "users.sandbox" in message and "symlink" in message

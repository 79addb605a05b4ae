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

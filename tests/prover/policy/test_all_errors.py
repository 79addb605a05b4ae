"""Every problem of a policy in one error: one round trip fixes them all."""

from __future__ import annotations

import pytest

from prover.errors import PolicyLoadError
from prover.policy.loader import load_policy
from prover.policy.messages import MAX_LISTED_ERRORS

THREE_MISTAKES = """\
version: 1
filesystem_policy:
  read_onlyy: [/usr]
network_policies:
  a:
    endpoints: [{ host: x.com, port: 99999 }]
    binaries: [{ path: /usr/bin/curl }]
  b:
    endpoints: [{ host: y.com, ports: 443 }]
    binaries: [{ path: /usr/bin/curl }]
"""


def test_every_problem_is_listed_with_its_field_and_lists_are_called_lists() -> None:
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(THREE_MISTAKES)
    message = str(caught.value)
    assert message.startswith("3 problems: ")
    for field in (
        "filesystem_policy.read_onlyy",
        "network_policies.a.endpoints[0].port",
        "network_policies.b.endpoints[0].ports' must be a list",
    ):
        assert field in message
    assert "tuple" not in message
    assert caught.value.path == "filesystem_policy.read_onlyy"


def test_one_problem_reads_as_before() -> None:
    with pytest.raises(PolicyLoadError) as caught:
        load_policy("version: 1\nfilesystem_policy:\n  read_onlyy: [/usr]\n")
    assert str(caught.value) == "unknown field 'filesystem_policy.read_onlyy' in authored policy"


def test_past_the_limit_the_rest_are_counted() -> None:
    rules = "".join(
        f"  r{i}:\n    endpoints: [{{ host: h{i}.com, port: 99999 }}]\n"
        f"    binaries: [{{ path: /usr/bin/curl }}]\n"
        for i in range(MAX_LISTED_ERRORS + 3)
    )
    with pytest.raises(PolicyLoadError) as caught:
        load_policy("version: 1\nnetwork_policies:\n" + rules)
    message = str(caught.value)
    assert message.startswith(f"{MAX_LISTED_ERRORS + 3} problems: ")
    assert message.endswith("; and 3 more")

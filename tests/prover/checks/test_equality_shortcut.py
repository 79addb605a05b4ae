"""The equality shortcut: equal but for the rules' display names, field by field."""

from __future__ import annotations

from dataclasses import fields, replace

from prover.checks.boundary import _same_but_names
from prover.policy.model import Endpoint, Filesystem, Policy, Rule

FILES = Filesystem(include_workdir=False, read_only=("/usr",), read_write=())
ENDPOINT = Endpoint(index=0, host="api.x.com", ports=(443,), layer="l4")
RULE = Rule(key="a", name="a", binaries=("/usr/bin/curl",), endpoints=(ENDPOINT,))
POLICY = Policy(FILES, rules=(RULE,))


def test_rules_differing_only_in_key_and_name_are_the_same() -> None:
    renamed = replace(POLICY, rules=(replace(RULE, key="b", name="shown"),))
    assert _same_but_names(POLICY, renamed)


def test_every_other_field_of_a_policy_and_a_rule_counts() -> None:
    # The shortcut compares rules by binaries and endpoints: a new Rule field would be
    # ignored, so this list must grow with the model (and the comparison with it).
    assert {f.name for f in fields(Rule)} == {"key", "name", "binaries", "endpoints"}
    changed = [
        replace(POLICY, filesystem=replace(FILES, read_write=("/tmp",))),
        replace(POLICY, run_as_user="root"),
        replace(POLICY, run_as_group="root"),
        replace(POLICY, landlock_compatibility="hard_requirement"),
        replace(POLICY, engine_requests=True),
        replace(POLICY, rules=()),
        replace(POLICY, rules=(RULE, RULE)),
        replace(POLICY, rules=(replace(RULE, binaries=("/usr/bin/git",)),)),
        replace(POLICY, rules=(replace(RULE, endpoints=(replace(ENDPOINT, ports=(80,)),)),)),
    ]
    assert len(changed) == len(fields(Policy)) + 3
    for other in changed:
        assert not _same_but_names(POLICY, other)
        assert not _same_but_names(other, POLICY)

"""Fixes proved on what the runtime enforces (issue 22): access no entry of the
candidate grants, which the runtime adds, and a candidate without a Landlock ruleset."""

from __future__ import annotations

from prover.api import check_boundary
from prover.explain import explain

IMAGE = """\
version: 1
workdir: /sandbox
symlinks_complete_beneath: [/]
paths_exist: {/usr: true, /tmp: true, /etc: true, /lib: true}
gpu: false
"""

NET = """\
network_policies:
  api:
    endpoints: [{host: api.example.com, port: 443}]
    binaries: [{path: /usr/bin/curl}]
"""


def test_a_writable_tmp_from_the_proxy_baseline_is_fixed_by_listing_it_read_only() -> None:
    # lib.rs enrich_proto_baseline_paths adds /tmp read-write unless the policy lists it.
    candidate = "version: 1\nfilesystem_policy: {read_only: [/usr], read_write: [/sandbox]}\n"
    boundary = "version: 1\nfilesystem_policy: {read_only: [/usr, /tmp], read_write: [/sandbox]}\n"
    explanation = explain(candidate + NET, boundary + NET, environment=IMAGE)
    assert explanation.result.result == "exceeds_boundary"
    assert explanation.fix_verified, explanation.explanation
    assert "list /tmp read-only" in explanation.violations[0].fix_description
    fixed = explanation.fixed_candidate
    assert fixed is not None
    assert (
        check_boundary(fixed, boundary + NET, environment=IMAGE).outcome.verdict
        == "within_boundary"
    )


def test_a_candidate_without_a_ruleset_is_told_why_and_gets_the_boundarys_paths() -> None:
    # landlock.rs prepare_with_path_open_mode: both lists empty, no ruleset at all.
    candidate = "version: 1\nfilesystem_policy: {include_workdir: false}\n"
    boundary = "version: 1\nfilesystem_policy: {read_only: [/usr, /etc]}\n"
    explanation = explain(candidate, boundary, environment=IMAGE)
    violation = explanation.violations[0]
    assert "no Landlock ruleset" in violation.description
    assert explanation.fix_verified, explanation.explanation
    fixed = explanation.fixed_candidate
    assert fixed is not None and "/usr" in fixed and "/etc" in fixed

"""The runtime's reading (issue 22): each case is a verdict that the policy's text alone
gets wrong, with the runtime fact (NVIDIA/OpenShell ``crates/``) it rests on."""

from __future__ import annotations

import pytest

from prover.api import check_boundary
from prover.results import FilesystemCounterexample, NetworkCounterexample, Verdict

NET = """\
network_policies:
  api:
    endpoints: [{host: api.example.com, port: 443}]
    binaries: [{path: BINARY}]
"""


def policy(filesystem: str = "", landlock: str = "", net: str = "", binary: str = "") -> str:
    text = "version: 1\n"
    if filesystem:
        text += f"filesystem_policy: {filesystem}\n"
    if landlock:
        text += f"landlock: {{compatibility: {landlock}}}\n"
    if net:
        text += NET.replace("BINARY", binary or "/usr/bin/curl")
    return text


STANDARD = """\
version: 1
workdir: /sandbox
user: sandbox
users: {root: 0, sandbox: 1000}
groups: {root: 0, sandbox: 1000}
symlinks: {/bin: usr/bin, /lib: usr/lib, /usr/bin/py: python3.11}
symlinks_complete_beneath: [/]
paths_exist: {/usr: true, /lib: true, /etc: true, /var/log: true, /tmp: true, /data: true}
gpu: false
"""


def test_empty_lists_mean_no_landlock_at_all() -> None:
    # landlock.rs prepare_with_path_open_mode: both lists empty -> no ruleset.
    candidate = policy("{include_workdir: false}", "hard_requirement")
    boundary = policy("{read_only: [/usr, /etc]}", "hard_requirement")
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.EXCEEDS
    assert outcome.counterexample == FilesystemCounterexample(access="write", path="/")
    assert any("Landlock is off" in r for r in outcome.readings)


def test_a_boundary_without_landlock_allows_every_path() -> None:
    candidate = policy("{read_write: [/tmp]}", "hard_requirement")
    boundary = policy("{include_workdir: false}")
    no_gpu = check_boundary(candidate, boundary, environment="version: 1\ngpu: false\n")
    assert no_gpu.outcome.verdict is Verdict.WITHIN
    # With a GPU the boundary's ruleset holds the GPU paths alone (lib.rs
    # GPU_BASELINE_*): an unstated GPU leaves the pair open.
    assert check_boundary(candidate, boundary).outcome.verdict is Verdict.UNSUPPORTED


def test_the_proxy_baseline_gives_the_candidate_tmp_read_write() -> None:
    # lib.rs enrich_proto_baseline_paths: /tmp read-write unless listed.
    candidate = policy("{read_only: [/usr]}", net="yes")
    boundary = policy("{read_only: [/usr, /tmp]}", net="yes")
    without = check_boundary(candidate, boundary).outcome
    assert without.verdict is not Verdict.WITHIN  # /tmp may be missing: not an exceed yet
    with_image = check_boundary(candidate, boundary, environment=STANDARD).outcome
    assert with_image.verdict is Verdict.EXCEEDS, with_image.reason
    assert with_image.counterexample == FilesystemCounterexample(access="write", path="/tmp")


@pytest.mark.parametrize("extra", ["{read_write: [/tmp]}", "{read_only: [/lib]}"])
def test_baseline_paths_of_the_boundary_are_not_false_exceeds(extra: str) -> None:
    candidate = policy(extra, net="yes")
    boundary = policy("{read_only: [/usr]}", net="yes")
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.WITHIN, outcome.reason


def test_best_effort_with_no_existing_path_may_run_without_landlock() -> None:
    # landlock.rs try_open_path skips a missing path under best_effort; with none left
    # the ruleset is abandoned and the sandbox runs without Landlock.
    candidate = policy("{read_only: [/data]}")
    boundary = policy("{read_only: [/data, /proc]}")
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.UNSUPPORTED
    assert "hard_requirement" in (outcome.reason or "")
    hard = policy("{read_only: [/data]}", "hard_requirement")
    assert check_boundary(hard, boundary).outcome.verdict is Verdict.WITHIN
    known = check_boundary(candidate, boundary, environment=STANDARD).outcome
    assert known.verdict is Verdict.WITHIN, known.reason


def test_a_gpu_the_evidence_does_not_rule_out_is_decided_too() -> None:
    # lib.rs GPU_BASELINE_READ_WRITE: /dev/nvidiactl read-write unless listed.
    candidate = policy("{read_only: [/usr]}", "hard_requirement")
    boundary = policy("{read_only: [/usr, /dev/nvidiactl]}", "hard_requirement")
    unknown = check_boundary(candidate, boundary).outcome
    assert unknown.verdict is Verdict.UNSUPPORTED
    assert "GPU" in (unknown.reason or "")
    no_gpu = check_boundary(candidate, boundary, environment="version: 1\ngpu: false\n")
    assert no_gpu.outcome.verdict is Verdict.WITHIN
    gpu = check_boundary(candidate, boundary, environment="version: 1\ngpu: true\n").outcome
    assert gpu.verdict is not Verdict.WITHIN


def test_a_binary_matches_its_link_target_not_a_path_through_a_symlinked_directory() -> None:
    # opa.rs resolve_binary_in_container: last-component links only.
    fs = "{read_only: [/usr]}"
    py = policy(fs, net="yes", binary="/usr/bin/py")
    real = policy(fs, net="yes", binary="/usr/bin/python3.11")
    through_bin = policy(fs, net="yes", binary="/bin/curl")
    for candidate, boundary in ((py, real), (real, py), (through_bin, real)):
        outcome = check_boundary(candidate, boundary, environment=STANDARD).outcome
        assert outcome.verdict is Verdict.WITHIN, outcome.reason
    curl = policy(fs, net="yes", binary="/usr/bin/curl")
    outcome = check_boundary(curl, through_bin, environment=STANDARD).outcome
    assert outcome.verdict is Verdict.EXCEEDS
    assert isinstance(outcome.counterexample, NetworkCounterexample)
    assert outcome.counterexample.binary == "/usr/bin/curl"  # a canonical executable


@pytest.mark.parametrize(
    ("driver", "expected"),
    [("docker", Verdict.EXCEEDS), ("kubernetes", Verdict.WITHIN), (None, Verdict.UNSUPPORTED)],
)
def test_an_omitted_group_is_the_users_primary_gid(driver: str | None, expected: Verdict) -> None:
    # identity.rs resolve_oci_process_identity_at: the primary gid from /etc/passwd (100),
    # not the group named like the user (1000); Kubernetes sets both ids itself; the VM
    # driver runs as sandbox (1000), so an unstated driver leaves it open.
    env = (
        "version: 1\nuser: sandbox\nusers: {sandbox: 1000}\ngroups: {sandbox: 1000}\n"
        "primary_gids: {sandbox: 100}\n" + (f"driver: {driver}\n" if driver else "")
    )
    candidate = policy("{read_only: [/usr]}", "hard_requirement")
    boundary = candidate + "process: {run_as_group: '1000'}\n"
    outcome = check_boundary(candidate, boundary, environment=env).outcome
    assert outcome.verdict is expected, outcome.reason


def test_a_hard_requirement_sandbox_with_a_missing_path_does_not_start() -> None:
    # landlock.rs try_open_path: under hard_requirement a path that cannot be opened is
    # fatal, so the sandbox never runs.
    env = "version: 1\npaths_exist: {/data: false}\ngpu: false\n"
    wide = policy("{read_write: [/data, /work]}", "hard_requirement")
    narrow = policy("{read_only: [/usr]}", "hard_requirement")
    never = check_boundary(wide, narrow, environment=env).outcome
    assert never.verdict is Verdict.WITHIN and "does not start" in (never.reason or "")
    refused = check_boundary(narrow, wide, environment=env).outcome
    assert refused.verdict is Verdict.UNSUPPORTED and "boundary's sandbox" in (refused.reason or "")
    # without the fact the exceed stands, and says what it assumed
    outcome = check_boundary(wide, narrow).outcome
    assert outcome.verdict is Verdict.EXCEEDS
    assert any("assumed: every path it lists exists" in r for r in outcome.readings)


def test_a_read_only_tmp_spelled_otherwise_still_gets_the_writable_baseline() -> None:
    # enrich_proto_baseline_paths_with compares paths as written: "/tmp/" is not "/tmp",
    # so the read-write /tmp is added beside it.
    loose = policy("{read_only: [/usr, /tmp/]}", net="yes")
    exact = policy("{read_only: [/usr, /tmp]}", net="yes")
    outcome = check_boundary(loose, exact, environment=STANDARD).outcome
    assert outcome.verdict is Verdict.EXCEEDS, outcome.reason
    assert outcome.counterexample == FilesystemCounterexample(access="write", path="/tmp")
    assert check_boundary(exact, loose, environment=STANDARD).outcome.verdict is Verdict.WITHIN


def test_a_rest_endpoint_that_allows_no_request_still_reaches_its_destination() -> None:
    # A path-less allow rule matches no request (opa.rs sends path ""), but the proxy
    # dials the destination to answer the CONNECT (proxy.rs) before any request is
    # refused: reaching a host the boundary cannot connect to is never a pass.
    inert = (
        "version: 1\nnetwork_policies:\n  p:\n    endpoints:\n"
        "    - {host: '**.example.com', port: 443, protocol: rest, enforcement: enforce,\n"
        "       rules: [{allow: {method: '*'}}]}\n"
        "    binaries: [{path: /usr/bin/curl}]\n"
    )
    elsewhere = inert.replace("'**.example.com'", "api.other.com")
    outcome = check_boundary(inert, elsewhere).outcome
    assert outcome.verdict is Verdict.UNSUPPORTED
    assert "still dials" in (outcome.reason or "")
    # the same destinations in the boundary, with any configuration, cover the connection
    covering = inert.replace("rules: [{allow: {method: '*'}}]", "access: read-only")
    assert check_boundary(inert, covering).outcome.verdict is Verdict.WITHIN


def test_a_pass_says_it_assumes_a_hard_requirement_boundary_starts() -> None:
    # try_open_path: a hard_requirement boundary whose /usr the image lacks never starts
    # (and allows nothing), so a pass assumes it does, and says so.
    candidate = policy("{read_only: [/usr]}", "hard_requirement")
    boundary = policy("{read_only: [/usr, /etc]}", "hard_requirement")
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.WITHIN
    assumed = "runtime: boundary: assumed: every path it lists exists"
    assert any(r.startswith(assumed) for r in outcome.readings)
    known = check_boundary(
        candidate, boundary, environment="version: 1\ngpu: false\npaths_exist: {/usr: true}\n"
    ).outcome
    assert not any(r.startswith(assumed) for r in known.readings)

"""Evidence in the boundary check: what it decides, in both semantics, and what it leaves.

Each case is ``unsupported`` without evidence; with the standard sandbox evidence it is
decided, and every exceed replays through the plain replay of
:mod:`prover.environment.replay`. Evidence that says nothing (``version: 1``) changes
no result at all.
"""

from __future__ import annotations

import pytest

from prover.api import check_boundary
from prover.environment import load_environment
from prover.environment.replay import replays_with_environment
from prover.policy.loader import load_policy
from prover.policy.model import Policy
from prover.policy.normalize import filesystem_of, process_fields
from prover.results import FilesystemCounterexample, ProcessCounterexample, Verdict
from tests.prover.environment.test_document import STANDARD

FS_ONLY = "version: 1\nfilesystem_policy: {{read_write: [{}]}}\n"
#: Under hard_requirement a missing path stops the sandbox instead of turning Landlock
#: off (landlock.rs try_open_path), so containment does not depend on which paths exist.
FS_HARD = FS_ONLY + "landlock: {{compatibility: hard_requirement}}\n"
BOTH = (False, True)


def _process(user: str | None = None, group: str | None = None) -> str:
    fields = [f"run_as_user: '{user}'" if user else "", f"run_as_group: '{group}'" if group else ""]
    inner = ", ".join(f for f in fields if f)
    body = f"process: {{{inner}}}\n" if inner else ""
    return "version: 1\nfilesystem_policy: {read_only: [/usr]}\n" + body


def _model(text: str) -> Policy:
    authored = load_policy(text)
    user, group, landlock = process_fields(authored)
    return Policy(filesystem_of(authored), user, group, landlock)


WITHIN = [
    # unresolved_workdir: a bare policy includes /sandbox, which the boundary lists
    ("version: 1\n", "version: 1\nfilesystem_policy: {read_write: [/sandbox, /tmp]}\n"),
    # a subdirectory of a boundary directory (Landlock grants the hierarchy)
    (FS_HARD.format("/workspace/project"), FS_HARD.format("/workspace")),
    # through a usr-merge symlink
    (FS_HARD.format("/lib/python3"), FS_HARD.format("/usr/lib")),
    # identities: omitted means the image's user; a number names the same uid
    (_process(), _process("sandbox", "sandbox")),
    (_process("1000", "1000"), _process("sandbox", "sandbox")),
    # root contains every identity
    (_process("sandbox", "sandbox"), _process("root", "root")),
]

EXCEEDS = [
    (FS_ONLY.format("/etc"), FS_ONLY.format("/usr"), FilesystemCounterexample),
    (FS_ONLY.format("/workspace"), FS_ONLY.format("/workspace/project"), FilesystemCounterexample),
    (
        "version: 1\n",
        "version: 1\nfilesystem_policy: {read_write: [/tmp]}\n",
        FilesystemCounterexample,
    ),
    (_process("1001", "sandbox"), _process("sandbox", "sandbox"), ProcessCounterexample),
    (_process("sandbox", "sandbox"), _process("1001", "1001"), ProcessCounterexample),
]


@pytest.mark.parametrize("reference", BOTH)
@pytest.mark.parametrize(("candidate", "boundary"), WITHIN)
def test_evidence_decides_within(candidate: str, boundary: str, reference: bool) -> None:
    without = check_boundary(candidate, boundary, reference_semantics=reference)
    if not reference and "'root'" in boundary:
        # By default a root boundary is an error: the runtime refuses it
        # (validate_sandbox_policy, prover.runtime.validation).
        assert without.outcome.verdict is Verdict.ERROR
        assert "got 'root'" in (without.outcome.reason or "")
        return
    assert without.outcome.verdict is Verdict.UNSUPPORTED
    check = check_boundary(candidate, boundary, reference_semantics=reference, environment=STANDARD)
    assert check.outcome.verdict is Verdict.WITHIN, check.outcome.reason
    assert check.receipt.environment_sha256 == load_environment(STANDARD).sha256
    assert check.receipt.assumptions  # the facts it relied on


@pytest.mark.parametrize("reference", BOTH)
@pytest.mark.parametrize(("candidate", "boundary", "kind"), EXCEEDS)
def test_evidence_decides_exceeds_and_the_witness_replays(
    candidate: str, boundary: str, kind: type, reference: bool
) -> None:
    without = check_boundary(candidate, boundary, reference_semantics=reference)
    assert without.outcome.verdict is Verdict.UNSUPPORTED
    check = check_boundary(candidate, boundary, reference_semantics=reference, environment=STANDARD)
    assert check.outcome.verdict is Verdict.EXCEEDS, check.outcome.reason
    cex = check.outcome.counterexample
    assert isinstance(cex, kind)
    env = load_environment(STANDARD)
    assert replays_with_environment(_model(candidate), _model(boundary), cex, env)
    # and it is not real in an image where the boundary's identity is root / covers it
    if isinstance(cex, ProcessCounterexample):
        assert cex.boundary and cex.candidate  # names both
        assert cex.boundary != cex.candidate


SILENT = [
    "version: 1\n",
    "version: 1\nusers: {other: 7}\nsymlinks_complete_beneath: [/opt]\n",
]
PAIRS = [*(pair[:2] for pair in WITHIN), *(pair[:2] for pair in EXCEEDS)]


@pytest.mark.parametrize("silent", SILENT)
@pytest.mark.parametrize(("candidate", "boundary"), PAIRS)
def test_silent_evidence_changes_nothing(candidate: str, boundary: str, silent: str) -> None:
    for reference in BOTH:
        plain = check_boundary(candidate, boundary, reference_semantics=reference).outcome
        evidenced = check_boundary(
            candidate, boundary, reference_semantics=reference, environment=silent
        )
        assert evidenced.outcome == plain
        assert evidenced.receipt.assumptions == ()


def test_without_evidence_the_receipt_has_no_environment_fields() -> None:
    from prover.results.report import boundary_report

    check = check_boundary("version: 1\n", "version: 1\n")
    document = boundary_report(check.outcome, inputs={}, receipt=check.receipt)
    assert "environment_sha256" not in document["receipt"]
    assert "assumptions" not in document["receipt"]


def test_invalid_evidence_is_an_error_naming_the_field() -> None:
    check = check_boundary("version: 1\n", "version: 1\n", environment="version: 1\nuser: [x]\n")
    assert check.outcome.verdict is Verdict.ERROR
    assert "'user'" in (check.outcome.reason or "")


def test_a_path_outside_complete_evidence_keeps_the_exact_rule() -> None:
    env = "version: 1\nsymlinks_complete_beneath: [/usr]\n"
    sub = check_boundary(
        FS_ONLY.format("/workspace/a"), FS_ONLY.format("/workspace"), environment=env
    )
    assert sub.outcome.verdict is Verdict.UNSUPPORTED
    inside = check_boundary(FS_ONLY.format("/usr/lib"), FS_ONLY.format("/usr"), environment=env)
    assert inside.outcome.verdict is Verdict.WITHIN
    assert inside.receipt.assumptions == ("no unlisted symlinks at or beneath /usr",)


def test_a_boundary_path_that_is_a_symlink_grants_its_target() -> None:
    env = "version: 1\nsymlinks: {/data: /mnt/disk}\nsymlinks_complete_beneath: [/]\n"
    check = check_boundary(FS_HARD.format("/mnt/disk/x"), FS_HARD.format("/data"), environment=env)
    assert check.outcome.verdict is Verdict.WITHIN
    assert "/data is a symlink to /mnt/disk" in check.receipt.assumptions


def test_a_symlink_loop_is_never_resolved() -> None:
    env = "version: 1\nsymlinks: {/a: b, /b: a}\nsymlinks_complete_beneath: [/]\n"
    check = check_boundary(FS_ONLY.format("/a/x"), FS_ONLY.format("/b"), environment=env)
    assert check.outcome.verdict is Verdict.UNSUPPORTED


def test_an_unknown_name_stays_unresolved() -> None:
    env = "version: 1\nuser: sandbox\nusers: {root: 0}\n"
    check = check_boundary(_process(), _process("sandbox", "sandbox"), environment=env)
    assert check.outcome.verdict is Verdict.UNSUPPORTED


BINARY_RULE = """\
version: 1
filesystem_policy: {{read_write: [/sandbox]}}
process: {{run_as_user: sandbox, run_as_group: sandbox}}
network_policies:
  gh:
    endpoints: [{{host: api.github.com, port: 443}}]
    binaries: [{{path: '{binary}'}}]
"""


def test_an_exact_binary_under_a_glob_is_decided_when_it_is_no_symlink() -> None:
    candidate = BINARY_RULE.format(binary="/usr/bin/curl")
    boundary = BINARY_RULE.format(binary="/usr/bin/*")
    for reference in BOTH:
        assert (
            check_boundary(candidate, boundary, reference_semantics=reference).outcome.reason_code
            == "unresolved_binary_path"
        )
        check = check_boundary(
            candidate, boundary, reference_semantics=reference, environment=STANDARD
        )
        assert check.outcome.verdict is Verdict.WITHIN
    # a binary path through a symlinked directory: the proxy expands the last component
    # only (opa.rs resolve_binary_in_container), so it matches no executable at all
    linked = BINARY_RULE.format(binary="/bin/curl")
    assert check_boundary(linked, boundary).outcome.verdict is Verdict.EXCEEDS
    check = check_boundary(linked, boundary, environment=STANDARD)
    assert check.outcome.verdict is Verdict.WITHIN
    assert "/bin is a symlink to usr/bin" in check.receipt.assumptions
    # and one that resolves outside the boundary's glob is not covered
    outside = "version: 1\nsymlinks: {/usr/bin/curl: /opt/curl}\nsymlinks_complete_beneath: [/]\n"
    check = check_boundary(linked, boundary, environment=outside)
    assert check.outcome.verdict is not Verdict.WITHIN


def test_explain_offers_a_subdirectory_with_evidence() -> None:
    from prover.explain import explain

    candidate = "version: 1\nfilesystem_policy: {read_only: [/usr], read_write: [/workspace]}\n"
    boundary = (
        "version: 1\nfilesystem_policy: {read_only: [/usr], read_write: [/workspace/project]}\n"
    )
    with_evidence = explain(candidate, boundary, environment=STANDARD)
    assert with_evidence.fix_verified is True
    assert with_evidence.fixed_candidate is not None
    assert "/workspace/project" in with_evidence.fixed_candidate
    assert with_evidence.inputs.environment_sha256 == load_environment(STANDARD).sha256
    without = explain(candidate, boundary)
    assert without.result.result == "unsupported" and not without.fix_verified

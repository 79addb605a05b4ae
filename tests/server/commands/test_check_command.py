"""``policy-prover check``: the reference CLI contract of spec §12, in process."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from prover import __version__
from server.cli import main

COVERAGE_LINE = "coverage: domains=filesystem,network_l4,network_rest,process,landlock\n"
#: The runtime fact a best_effort candidate listing only /usr rests on (landlock.rs
#: try_open_path: were /usr missing, no ruleset would be built).
ASSUMED_USR = (
    "runtime: candidate: assumed: /usr exists in the image (best_effort runs without "
    "Landlock when no listed path exists)\n"
)
REFERENCE_KEYS = [
    "schema_version",
    "prover_version",
    "check",
    "coverage",
    "result",
    "exit_code",
    "inputs",
    "counterexample",
    "reason_code",
    "reason",
]
RECEIPT_KEYS = [
    "candidate_sha256",
    "boundary_sha256",
    "z3_version",
    "elapsed_ms",
    "decided_by",
    "semantics",
    "readings",
]

BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n    - /etc\n"
WITHIN = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n"
EXCEEDS = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n  read_write:\n    - /tmp\n"
GRAPHQL = (
    "version: 1\nnetwork_policies:\n  g:\n    endpoints:\n    - host: api.example.com\n"
    "      port: 443\n      protocol: graphql\n    binaries:\n    - path: /usr/bin/curl\n"
)
INVALID = "version: 1\nmetadata: {}\n"


def _many_rules(count: int) -> str:
    lines = ["version: 1", "network_policies:"]
    for i in range(count):
        lines += [
            f"  r{i}:",
            "    endpoints:",
            f"    - host: h{i}.example.com",
            "      port: 443",
            "    binaries:",
            "    - path: /usr/bin/curl",
        ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the policies used below, by relative name."""
    monkeypatch.chdir(tmp_path)
    for name, text in {
        "boundary.yaml": BOUNDARY,
        "within.yaml": WITHIN,
        "exceeds.yaml": EXCEEDS,
        "graphql.yaml": GRAPHQL,
        "uid.yaml": "version: 1\nprocess: {run_as_user: '1500'}\n",
        "invalid.yaml": INVALID,
        "empty.yaml": "version: 1\n",
        "huge.yaml": _many_rules(1100),
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run_cli(capsys, *argv, "--output", "json")
    assert out.endswith("}\n")
    return code, json.loads(out), err


# -- text output --------------------------------------------------------------------


def test_within_prints_exactly_the_result_and_coverage_lines(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", "within.yaml", "--boundary", "boundary.yaml")
    assert (code, out, err) == (0, "result: within_boundary\n" + COVERAGE_LINE + ASSUMED_USR, "")


def test_exceeds_prints_a_counterexample_line_and_exits_1(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", "exceeds.yaml", "--boundary", "boundary.yaml")
    expected = (
        "result: exceeds_boundary\n"
        + COVERAGE_LINE
        + "counterexample: filesystem write /tmp\n"
        + ASSUMED_USR
    )
    assert (code, out, err) == (1, expected, "")


def test_unsupported_prints_the_reason_and_exits_3(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        capsys, "check", "graphql.yaml", "--boundary", "empty.yaml", "--reference-semantics"
    )
    reason = "candidate policy rule 'g' uses protocol 'graphql'; only L4 TCP and REST are modeled"
    assert (code, out, err) == (3, f"result: unsupported\n{COVERAGE_LINE}reason: {reason}\n", "")


def test_inconclusive_over_the_resource_limit_prints_the_reason_and_exits_3(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "check", "huge.yaml", "--boundary", "empty.yaml")
    lines = out.splitlines()
    assert code == 3
    assert lines[:2] == ["result: inconclusive", COVERAGE_LINE.strip()]
    assert len(lines) == 3 and lines[2].startswith("reason: ")


def test_control_characters_in_text_output_are_escaped_like_rust(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("esc.yaml").write_text(
        'version: 1\nfilesystem_policy:\n  read_write:\n    - "/tmp/\\e[31mred\\tx"\n',
        encoding="utf-8",
    )
    code, out, _ = run_cli(capsys, "check", "esc.yaml", "--boundary", "boundary.yaml")
    assert code == 1
    assert out.splitlines()[2] == "counterexample: filesystem write /tmp/\\u{1b}[31mred\\tx"
    assert "\x1b" not in out


def test_control_characters_in_a_reason_are_escaped(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("esc.yaml").write_text(GRAPHQL.replace("  g:", '  "g\\e":'), encoding="utf-8")
    code, out, _ = run_cli(
        capsys, "check", "esc.yaml", "--boundary", "empty.yaml", "--reference-semantics"
    )
    assert code == 3
    assert "rule 'g\\u{1b}' uses protocol" in out
    assert "\x1b" not in out


# -- JSON output --------------------------------------------------------------------


def test_json_output_is_pretty_with_the_reference_keys_in_order_then_the_receipt(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        capsys, "check", "within.yaml", "--boundary", "boundary.yaml", "-o", "json"
    )
    document = json.loads(out)
    assert code == 0 and err == ""
    assert list(document) == [*REFERENCE_KEYS, "receipt"]
    assert list(document["receipt"]) == RECEIPT_KEYS
    assert out == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert document["schema_version"] == 1
    assert document["prover_version"] == __version__
    assert document["check"] == "boundary"
    assert document["coverage"] == {
        "domains": ["filesystem", "network_l4", "network_rest", "process", "landlock"]
    }
    assert document["result"] == "within_boundary" and document["exit_code"] == 0
    assert document["inputs"] == {"candidate": "within.yaml", "boundary": "boundary.yaml"}
    assert document["counterexample"] is None
    assert document["reason_code"] is None and document["reason"] is None


def test_json_receipt_binds_the_result_to_the_exact_input_bytes(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib

    _, document, _ = run_json(capsys, "check", "within.yaml", "--boundary", "boundary.yaml")
    receipt = document["receipt"]
    assert receipt["candidate_sha256"] == hashlib.sha256(WITHIN.encode()).hexdigest()
    assert receipt["boundary_sha256"] == hashlib.sha256(BOUNDARY.encode()).hexdigest()
    assert receipt["elapsed_ms"] >= 0
    assert receipt["z3_version"]


def test_json_exceeds_has_a_counterexample_object_and_null_reasons(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document, _ = run_json(capsys, "check", "exceeds.yaml", "--boundary", "boundary.yaml")
    assert code == 1 and document["exit_code"] == 1
    assert document["result"] == "exceeds_boundary"
    assert document["counterexample"] == {"domain": "filesystem", "access": "write", "path": "/tmp"}
    assert document["reason_code"] is None and document["reason"] is None


def test_json_unsupported_has_a_reason_code(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # (graphql.yaml is refused by the runtime by default: protocol without rules or access)
    code, document, _ = run_json(capsys, "check", "uid.yaml", "--boundary", "empty.yaml")
    assert code == 3 and document["exit_code"] == 3
    assert (document["result"], document["reason_code"]) == (
        "unsupported",
        "unsupported_policy_shape",
    )
    assert document["counterexample"] is None


def test_json_resource_limit_is_inconclusive(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document, _ = run_json(capsys, "check", "huge.yaml", "--boundary", "empty.yaml")
    assert code == 3
    assert (document["result"], document["reason_code"]) == ("inconclusive", "resource_limit")


def test_json_keeps_control_characters_as_json_escapes(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("esc.yaml").write_text(
        'version: 1\nfilesystem_policy:\n  read_write:\n    - "/tmp/\\e"\n', encoding="utf-8"
    )
    code, out, _ = run_cli(capsys, "check", "esc.yaml", "--boundary", "boundary.yaml", "-o", "json")
    assert code == 1
    assert '"path": "/tmp/\\u001b"' in out
    assert json.loads(out)["counterexample"]["path"] == "/tmp/\x1b"


# -- input errors -------------------------------------------------------------------

INPUT_ERRORS = [
    pytest.param(
        ["missing.yaml", "boundary.yaml"],
        "cannot open 'missing.yaml': No such file or directory (os error 2)",
        id="missing-candidate",
    ),
    pytest.param(
        ["within.yaml", "missing.yaml"],
        "cannot open 'missing.yaml': No such file or directory (os error 2)",
        id="missing-boundary",
    ),
    pytest.param(
        ["invalid.yaml", "boundary.yaml"],
        "invalid candidate policy: invalid policy: ",
        id="invalid-candidate",
    ),
    pytest.param(
        ["within.yaml", "invalid.yaml"],
        "invalid boundary policy: invalid policy: ",
        id="invalid-boundary",
    ),
    pytest.param(["latin1.yaml", "boundary.yaml"], "policy file is not valid UTF-8", id="non-utf8"),
    pytest.param(
        ["oversized.yaml", "boundary.yaml"],
        "policy file exceeds the 4194304-byte input limit",
        id="over-4-mib",
    ),
    pytest.param(
        ["pipe.yaml", "boundary.yaml"], "policy path 'pipe.yaml' is not a regular file", id="fifo"
    ),
    pytest.param(["within.yaml", "."], "policy path '.' is not a regular file", id="directory"),
    # Reading both files precedes parsing either: a missing boundary beats an invalid candidate.
    pytest.param(
        ["invalid.yaml", "missing.yaml"],
        "cannot open 'missing.yaml': No such file or directory (os error 2)",
        id="read-before-parse",
    ),
    # The candidate is parsed before the boundary.
    pytest.param(
        ["invalid.yaml", "invalid.yaml"],
        "invalid candidate policy: invalid policy: ",
        id="candidate-parsed-first",
    ),
]


@pytest.fixture
def bad_files(files: Path) -> Path:
    (files / "latin1.yaml").write_bytes(b"version: 1\n# caf\xe9\n")
    (files / "oversized.yaml").write_bytes(b"version: 1\n" + b"#" * (4 * 1024 * 1024))
    os.mkfifo(files / "pipe.yaml")
    return files


@pytest.mark.parametrize(("paths", "reason"), INPUT_ERRORS)
def test_text_mode_input_errors_go_to_stderr_with_exit_2(
    bad_files: Path, capsys: pytest.CaptureFixture[str], paths: list[str], reason: str
) -> None:
    code, out, err = run_cli(capsys, "check", paths[0], "--boundary", paths[1])
    assert code == 2
    assert out == ""
    assert err.startswith(f"policy-prover: {reason}") and err.endswith("\n")
    assert err.count("\n") == 1


@pytest.mark.parametrize(("paths", "reason"), INPUT_ERRORS)
def test_json_mode_input_errors_print_an_error_envelope_with_exit_2(
    bad_files: Path, capsys: pytest.CaptureFixture[str], paths: list[str], reason: str
) -> None:
    code, out, err = run_cli(capsys, "check", paths[0], "--boundary", paths[1], "-o", "json")
    document = json.loads(out)
    assert code == 2 and err == ""
    assert list(document) == [*REFERENCE_KEYS, "receipt"]
    assert document["coverage"] is None
    assert document["result"] == "error" and document["exit_code"] == 2
    assert document["reason_code"] == "invalid_input"
    assert document["reason"].startswith(reason)
    assert document["counterexample"] is None
    assert document["inputs"] == {"candidate": paths[0], "boundary": paths[1]}


def test_an_error_envelope_hashes_only_the_inputs_that_were_read(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, document, _ = run_json(capsys, "check", "within.yaml", "--boundary", "missing.yaml")
    assert document["receipt"]["candidate_sha256"] is not None
    assert document["receipt"]["boundary_sha256"] is None


# -- usage errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["check"], "required", id="no-arguments"),
        pytest.param(["check", "within.yaml"], "required", id="no-boundary"),
        pytest.param(["check", "--boundary", "boundary.yaml"], "required", id="no-candidate"),
        pytest.param(
            ["check", "within.yaml", "--boundary", "boundary.yaml", "--maximum", "x.yaml"],
            "--maximum",
            id="old-maximum-flag",
        ),
        pytest.param(
            ["check", "within.yaml", "--boundary", "boundary.yaml", "-o", "yaml"],
            "invalid choice",
            id="bad-output",
        ),
        pytest.param(
            ["check", "within.yaml", "--boundary", "boundary.yaml", "--timeout", "0ms"],
            "duration must be positive",
            id="zero-timeout",
        ),
        pytest.param(
            ["check", "within.yaml", "--boundary", "boundary.yaml", "--timeout", "10"],
            "duration must end in ms, s, or m",
            id="timeout-without-unit",
        ),
        pytest.param(
            ["check", "within.yaml", "--boundary", "boundary.yaml", "--timeout=-5s"],
            "duration must use a positive integer",
            id="negative-timeout",
        ),
        pytest.param(
            ["check", "within.yaml", "--boundary", "boundary.yaml", "--timeout", "1.5s"],
            "duration must use a positive integer",
            id="fractional-timeout",
        ),
        pytest.param(
            [
                "check",
                "within.yaml",
                "--boundary",
                "boundary.yaml",
                "--timeout",
                "99999999999999999999s",
            ],
            "duration is too large",
            id="overflowing-timeout",
        ),
        pytest.param(
            ["check", "within.yaml", "--boundary", "boundary.yaml", "--timeout", "4294967296ms"],
            "duration must not exceed 4294967295ms",
            id="timeout-over-u32",
        ),
        pytest.param(["frobnicate"], "invalid choice", id="unknown-command"),
    ],
)
def test_usage_errors_exit_2_with_a_message_on_stderr_only(
    files: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err


def test_usage_errors_in_json_mode_still_print_nothing_on_stdout(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", "within.yaml", "-o", "json")
    assert (code, out) == (2, "")
    assert "required" in err


def test_a_valid_timeout_is_accepted(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for timeout in ("500ms", "3s", "1m"):
        code, _, err = run_cli(
            capsys, "check", "within.yaml", "--boundary", "boundary.yaml", "--timeout", timeout
        )
        assert (code, err) == (0, "")


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_failed_write_of_the_result_exits_2(
    files: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["check", "within.yaml", "--boundary", "boundary.yaml", "-o", output]) == 2

"""``policy-prover explain``: the library's explanation on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prover.api import check_boundary
from prover.explain import explain
from prover.results.report import boundary_report
from server.cli import main
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS

BOUNDARY_ARGS = ("--boundary", "boundary.yaml")
GRAPHQL = (
    "version: 1\nnetwork_policies:\n  g:\n    endpoints:\n    - host: api.example.com\n"
    "      port: 443\n      protocol: graphql\n    binaries:\n    - path: /usr/bin/curl\n"
)


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name, text in {
        "boundary.yaml": BOUNDARY,
        "exceeds.yaml": THREE_VIOLATIONS,
        "within.yaml": "version: 1\nfilesystem_policy: {read_only: [/usr]}\n",
        "graphql.yaml": GRAPHQL,
        # (graphql without rules or access is refused by the runtime: an error)
        "uid.yaml": "version: 1\nprocess: {run_as_user: '1500'}\n",
        "invalid.yaml": "version: 1\nmetadata: {}\n",
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("candidate", "status", "result"),
    [
        ("within.yaml", 0, "within_boundary"),
        ("exceeds.yaml", 1, "exceeds_boundary"),
        ("invalid.yaml", 2, "error"),
        ("uid.yaml", 3, "unsupported"),
        ("graphql.yaml", 2, "error"),
    ],
)
def test_json_output_is_the_librarys_explanation_and_the_exit_status_the_checks(
    files: Path, capsys: pytest.CaptureFixture[str], candidate: str, status: int, result: str
) -> None:
    code = main(["explain", candidate, "--boundary", "boundary.yaml", "-o", "json"])

    out = capsys.readouterr()
    document = json.loads(out.out)
    assert code == status
    assert document["result"]["result"] == result
    expected = explain((files / candidate).read_text(), BOUNDARY).model_dump(mode="json")
    assert document == expected
    assert out.err == ""


def test_text_output_explains_each_violation(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["explain", "exceeds.yaml", "--boundary", "boundary.yaml"])

    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("result: exceeds_boundary\n")
    assert "violation 3: " in out
    assert "fix verified: yes" in out


def test_a_result_file_is_re_verified(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check = check_boundary(THREE_VIOLATIONS, BOUNDARY)
    report = boundary_report(check.outcome, inputs={"candidate": "c", "boundary": "b"})
    report["result"] = "within_boundary"
    (files / "result.json").write_text(json.dumps(report), encoding="utf-8")

    main(
        [
            "explain",
            "exceeds.yaml",
            "--boundary",
            "boundary.yaml",
            "--result",
            "result.json",
            "-o",
            "json",
        ]
    )

    prior = json.loads(capsys.readouterr().out)["prior_result"]
    assert prior["agrees"] is False and "DISAGREES" in prior["note"]


def test_max_violations_limits_the_rounds(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "explain",
            "exceeds.yaml",
            "--boundary",
            "boundary.yaml",
            "--max-violations",
            "2",
            "-o",
            "json",
        ]
    )

    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert len(document["violations"]) == 2
    assert document["fix_verified"] is False and document["fixed_candidate"] is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--max-violations", "0"], "positive integer"),
        (["--max-violations", "x"], "positive integer"),
        (["--timeout", "10"], "duration must end in ms, s, or m"),
    ],
)
def test_bad_arguments_are_usage_errors(
    files: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    code = main(["explain", "exceeds.yaml", "--boundary", "boundary.yaml", *arguments])

    out = capsys.readouterr()
    assert code == 2
    assert out.out == ""
    assert message in out.err


def test_a_missing_file_is_an_error_on_stderr_in_text_mode(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["explain", "missing.yaml", "--boundary", "boundary.yaml"])

    out = capsys.readouterr()
    assert code == 2
    assert out.out == ""
    assert out.err.startswith("policy-prover: cannot open 'missing.yaml'")


def test_a_missing_file_is_an_error_explanation_in_json_mode(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["explain", "exceeds.yaml", "--boundary", "missing.yaml", "-o", "json"])

    out = capsys.readouterr()
    document = json.loads(out.out)
    assert code == 2
    assert out.err == ""
    assert document["result"]["result"] == "error"
    assert document["result"]["reason"].startswith("cannot open 'missing.yaml'")
    assert document["inputs"]["boundary_sha256"] is None
    assert document["inputs"]["candidate_sha256"] is not None


def test_the_text_names_command_line_flags_and_json_the_tool_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hints are written for MCP callers (the `environment` argument); the command line's
    text names its own flag, and its JSON stays the MCP tool's analysis."""
    boundary = "version: 1\nfilesystem_policy:\n  include_workdir: false\n  read_write: [/w]\n"
    (tmp_path / "c.yaml").write_text(boundary.replace("/w]", "/w/x]"), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(boundary, encoding="utf-8")
    args = ["explain", str(tmp_path / "c.yaml"), "--boundary", str(tmp_path / "b.yaml")]
    main(args)
    text = capsys.readouterr().out
    assert "--environment FILE" in text and "`environment` argument" not in text
    main([*args, "-o", "json"])
    document = json.loads(capsys.readouterr().out)
    assert "the `environment` argument" in document["blockers"][0]["rewrite_hints"][0]

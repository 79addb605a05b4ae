"""``policy-prover assess``: every proposal case through the CLI, output formats, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prover.proposal import assess_proposal, exit_code, render_text
from server.cli import main
from tests.prover.proposal.test_cases import DIVERGENCES
from tests.support import proposal_cases

CURRENT = """\
version: 1
network_policies:
  gh:
    endpoints:
      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}
    binaries: [{path: /usr/bin/gh}]
"""
NEW_HOST = json.dumps(
    {
        "rule_name": "pypi",
        "rule": {
            "endpoints": [{"host": "pypi.org", "port": 443}],
            "binaries": [{"path": "/usr/bin/pip"}],
        },
    }
)
CREDENTIALS = json.dumps([{"name": "pat", "type": "github", "target_hosts": ["api.github.com"]}])


def case_inputs(case: dict[str, Any]) -> dict[str, str]:
    """The texts of a case, exactly as tests/prover/proposal/test_cases.py feeds them."""
    return {
        "current": case["current_policy"],
        "proposal": json.dumps(
            {"rule_name": case["proposal"]["rule_name"], "rule": case["proposal"]["rule"]}
        ),
        "credentials": json.dumps(case.get("credentials") or []),
        "mode": case.get("mode", "agent_authored"),
    }


def run_cli(
    directory: Path,
    capsys: pytest.CaptureFixture[str],
    texts: dict[str, str],
    *extra: str,
    output: str = "json",
) -> tuple[int, str, str]:
    """Write each input to a file, run ``assess`` in this process; (status, stdout, stderr)."""
    argv = ["assess", "-o", output]
    for role, text in texts.items():
        if role == "mode":
            argv += ["--mode", text]
            continue
        path = directory / f"{role}.txt"
        path.write_text(text, encoding="utf-8")
        argv += [f"--{role.replace('_', '-')}", str(path)]
    status = main([*argv, *extra])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def without_run_dependent(document: dict[str, Any]) -> dict[str, Any]:
    """The document without the boundary receipt's elapsed time."""
    copy = json.loads(json.dumps(document))
    if copy.get("boundary"):
        copy["boundary"]["receipt"].pop("elapsed_ms")
    return copy


def _library(texts: dict[str, str]) -> Any:
    return assess_proposal(
        texts["current"],
        texts["proposal"],
        credentials=texts.get("credentials"),
        mode=texts.get("mode", "agent_authored"),  # type: ignore[arg-type]
        boundary=texts.get("boundary"),
    )


def _case_params(*, with_divergences: bool) -> list[Any]:
    params = []
    for case in proposal_cases():
        marks = []
        if with_divergences and case["id"] in DIVERGENCES:
            marks.append(pytest.mark.xfail(strict=True, reason=DIVERGENCES[case["id"]]))
        params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


@pytest.mark.parametrize("case", _case_params(with_divergences=False))
def test_every_case_gives_the_library_assessment_through_the_cli(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = {**case_inputs(case), "boundary": case["current_policy"]}
    status, out, err = run_cli(tmp_path, capsys, texts)
    library = _library(texts)
    document = json.loads(out)
    assert err == ""
    assert out.endswith("}\n") and out.startswith('{\n  "findings": ')
    assert status == exit_code(library)
    assert without_run_dependent(document) == without_run_dependent(library.model_dump(mode="json"))


@pytest.mark.parametrize("case", _case_params(with_divergences=True))
def test_every_case_meets_its_expectations_through_the_cli(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expect = case["expect"]
    status, out, _ = run_cli(tmp_path, capsys, case_inputs(case))
    document = json.loads(out)
    assert document["application_error"] is None
    assert [f["category"] for f in document["findings"]] == expect["findings"]
    assert document["no_new_findings"] is expect["no_new_findings"]
    if "validation_result" in expect:
        assert document["validation_result"] == expect["validation_result"]
    for note in expect.get("security_notes_contains", []):
        assert note in document["security_notes"]
    for fragment in expect.get("security_notes_not_contains", []):
        assert not any(fragment in note for note in document["security_notes"])
    if expect.get("security_notes_empty"):
        assert document["security_notes"] == []
    if "auto_mode_status" in expect:
        assert document["auto_approvable"] is (expect["auto_mode_status"] == "approved")
    if "canonical_rule_name" in expect:
        assert document["target_rule"] == expect["canonical_rule_name"]
    assert status == (1 if document["needs_review"] else 0)


def test_text_output_is_the_report_with_both_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = {
        "current": CURRENT,
        "proposal": NEW_HOST,
        "credentials": CREDENTIALS,
        "boundary": CURRENT,
    }
    status, out, err = run_cli(tmp_path, capsys, texts, output="text")
    assert (status, err) == (1, "")
    assert out == render_text(_library(texts))
    assert "Adds access:  yes — " in out
    assert "Boundary:     exceeds_boundary (FAIL: merged policy against the boundary)" in out


def test_a_redundant_proposal_within_the_boundary_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    again = json.dumps(
        {
            "rule_name": "gh",
            "rule": {
                "endpoints": [
                    {
                        "host": "api.github.com",
                        "port": 443,
                        "protocol": "rest",
                        "enforcement": "enforce",
                        "access": "read-only",
                    }
                ],
                "binaries": [{"path": "/usr/bin/gh"}],
            },
        }
    )
    texts = {"current": CURRENT, "proposal": again, "boundary": CURRENT}
    status, out, _ = run_cli(tmp_path, capsys, texts)
    document = json.loads(out)
    assert status == 0
    assert document["adds_access"] is False
    assert document["boundary"]["result"] == "within_boundary"


def test_a_proposal_that_cannot_be_applied_prints_the_assessment_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wildcard = json.dumps(
        {
            "rule_name": "r",
            "rule": {
                "endpoints": [{"host": "*.com", "port": 443}],
                "binaries": [{"path": "/usr/bin/curl"}],
            },
        }
    )
    status, out, err = run_cli(tmp_path, capsys, {"current": CURRENT, "proposal": wildcard})
    document = json.loads(out)
    assert (status, err) == (2, "")
    assert document["application_error"].startswith("candidate invalid:")
    assert document["adds_access"] is None and document["boundary"] is None


INVALID_CONTENT = [
    ("current", "version: 2\n", "current policy: "),
    ("proposal", "{}", "proposal: "),
    ("credentials", "{bad: 1}", "credentials"),
    ("boundary", "version: 1\nsurprise: 1\n", "boundary policy: "),
    ("accepted_risks", "3", "accepted risks"),
    ("registry", "3", "registry"),
]


@pytest.mark.parametrize(("role", "content", "problem"), INVALID_CONTENT)
def test_invalid_input_names_the_file_on_stderr_in_text_mode(
    role: str, content: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = {"current": CURRENT, "proposal": NEW_HOST, role: content}
    status, out, err = run_cli(tmp_path, capsys, texts, output="text")
    option = "--" + role.replace("_", "-")
    assert (status, out) == (2, "")
    assert err.startswith(f"policy-prover: {option} '{tmp_path / (role + '.txt')}': {problem}")
    assert err.endswith("\n") and err.count("\n") == 1


@pytest.mark.parametrize(("role", "content", "problem"), INVALID_CONTENT)
def test_invalid_input_is_an_error_envelope_on_stdout_in_json_mode(
    role: str, content: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = {"current": CURRENT, "proposal": NEW_HOST, role: content}
    status, out, err = run_cli(tmp_path, capsys, texts)
    document = json.loads(out)
    assert (status, err) == (2, "")
    assert list(document) == [
        "schema_version",
        "prover_version",
        "check",
        "result",
        "exit_code",
        "inputs",
        "reason_code",
        "reason",
    ]
    assert (document["check"], document["result"], document["exit_code"]) == (
        "proposal",
        "error",
        2,
    )
    assert document["reason_code"] == "invalid_input"
    option = "--" + role.replace("_", "-")
    assert document["reason"].startswith(f"{option} '{tmp_path / (role + '.txt')}': {problem}")
    assert document["inputs"][role] == str(tmp_path / f"{role}.txt")
    assert set(document["inputs"]) == {
        "current",
        "proposal",
        "credentials",
        "boundary",
        "accepted_risks",
        "registry",
    }


def test_unreadable_files_are_invalid_input_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = tmp_path / "current.yaml"
    current.write_text(CURRENT, encoding="utf-8")
    (tmp_path / "latin1.json").write_bytes(b"[\xff]")
    cases = [
        (["--proposal", str(tmp_path / "missing.json")], "--proposal: cannot open '"),
        (["--proposal", str(tmp_path)], "--proposal: policy path '"),
        (
            ["--proposal", str(current), "--credentials", str(tmp_path / "latin1.json")],
            f"--credentials '{tmp_path / 'latin1.json'}': policy file is not valid UTF-8",
        ),
    ]
    for extra, message in cases:
        status = main(["assess", "--current", str(current), *extra])
        captured = capsys.readouterr()
        assert (status, captured.out) == (2, "")
        assert captured.err.startswith(f"policy-prover: {message}"), captured.err


@pytest.mark.parametrize(
    "extra", [["--timeout", "10"], ["--timeout", "0s"], ["--mode", "human"], ["-o", "xml"]]
)
def test_bad_options_are_usage_errors(
    extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["assess", "--current", "c", "--proposal", "p", *extra])
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert "usage:" in captured.err


def test_help_lists_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["assess", "--help"]) == 0
    out = capsys.readouterr().out
    for option in (
        "--current",
        "--proposal",
        "--credentials",
        "--boundary",
        "--accepted-risks",
        "--registry",
        "--mode",
        "--timeout",
        "--output",
    ):
        assert option in out


def test_a_cancelled_assessment_still_prints_and_exits_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def cancel_first(func: Any, cancel: Any) -> Any:
        cancel()  # as the first Ctrl-C would
        return func()

    monkeypatch.setattr("server.commands.assess.call_cancellable", cancel_first)
    texts = {"current": CURRENT, "proposal": NEW_HOST, "boundary": CURRENT}
    status, out, _ = run_cli(tmp_path, capsys, texts)
    document = json.loads(out)
    assert status == 130
    assert document["result"] == "inconclusive"
    assert document["reason_code"] == "cancelled"
    assert document["exit_code"] == 3


def test_an_assessment_out_of_time_prints_inconclusive_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from prover.run.budget import BudgetExhausted

    def out_of_time(func: Any, cancel: Any) -> Any:
        raise BudgetExhausted(cancelled=False)

    monkeypatch.setattr("server.commands.assess.call_cancellable", out_of_time)
    texts = {"current": CURRENT, "proposal": NEW_HOST}
    status, out, _ = run_cli(tmp_path, capsys, texts)
    document = json.loads(out)
    assert status == 3
    assert document["result"] == "inconclusive"
    assert document["reason_code"] == "solver_timeout"


def test_an_internal_failure_is_an_error_never_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("model exploded")

    monkeypatch.setattr("prover.proposal.assess_proposal", broken)
    status, out, err = run_cli(tmp_path, capsys, {"current": CURRENT, "proposal": NEW_HOST})
    assert (status, out) == (2, "")
    assert err == "policy-prover: internal error: RuntimeError: model exploded\n"

"""The ``policy-prover`` entry point: help, version, subcommand registry, the seed page."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from prover import __version__
from server.cli import build_parser, main
from server.commands import COMMAND_MODULES, load_commands


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_no_subcommand_prints_help_on_stdout_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys)
    assert code == 0 and err == ""
    assert out.startswith("usage: policy-prover")
    for command in ("check", "serve", "demo"):
        assert command in out


@pytest.mark.parametrize(
    "argv", [["--help"], ["-h"], ["check", "--help"], ["serve", "--help"], ["demo", "--help"]]
)
def test_help_exits_0_on_stdout(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and err == ""
    assert out.startswith("usage: policy-prover")


def test_check_help_documents_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "check", "--help")
    for option in ("CANDIDATE", "--boundary", "--output", "--timeout", "text", "json"):
        assert option in out


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "--version")
    assert (code, out, err) == (0, f"policy-prover {__version__}\n", "")


def test_every_listed_command_module_registers_a_runnable_subcommand() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert len(load_commands()) == len(COMMAND_MODULES)
    for name, sub in subparsers.choices.items():
        assert callable(sub.get_default("run")), name


def test_a_keyboard_interrupt_outside_a_check_exits_130(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def interrupted(path: str) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("server.commands.check.read_policy_file", interrupted)
    assert main(["check", "a.yaml", "--boundary", "b.yaml"]) == 130


# -- the seed page (docs/how-it-works/policies/prover.mdx), byte for byte ------------------

SEED_BOUNDARY = """\
version: 1
filesystem_policy:
  read_only:
    - /usr
    - /etc
"""
SEED_CANDIDATE = """\
version: 1
filesystem_policy:
  read_only:
    - /usr
"""
SEED_CANDIDATE_WITH_TMP = """\
version: 1
filesystem_policy:
  read_only:
    - /usr
  read_write:
    - /tmp
"""
SEED_GRAPHQL_CANDIDATE = """\
version: 1
network_policies:
  g:
    endpoints:
    - host: api.example.com
      port: 443
      protocol: graphql
    binaries:
    - path: /usr/bin/curl
"""
COVERAGE = "coverage: domains=filesystem,network_l4,network_rest,process,landlock\n"

SEED_EXAMPLES: list[Any] = [
    pytest.param(
        SEED_CANDIDATE,
        SEED_BOUNDARY,
        0,
        "result: within_boundary\n" + COVERAGE,
        id="candidate-within",
    ),
    pytest.param(
        SEED_CANDIDATE_WITH_TMP,
        SEED_BOUNDARY,
        1,
        "result: exceeds_boundary\n" + COVERAGE + "counterexample: filesystem write /tmp\n",
        id="candidate-writes-tmp",
    ),
    pytest.param(
        SEED_GRAPHQL_CANDIDATE,
        "version: 1\n",
        3,
        "result: unsupported\n"
        + COVERAGE
        + "reason: candidate policy rule 'g' uses protocol 'graphql'; only L4 TCP and REST "
        "are modeled\n",
        id="graphql-unsupported",
    ),
]


@pytest.mark.parametrize(("candidate", "boundary", "exit_code", "stdout"), SEED_EXAMPLES)
def test_the_seed_page_examples_are_reproduced_byte_for_byte(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    candidate: str,
    boundary: str,
    exit_code: int,
    stdout: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("candidate.yaml").write_text(candidate, encoding="utf-8")
    Path("boundary.yaml").write_text(boundary, encoding="utf-8")
    # The seed page documents the reference prover: reproduced under its semantics.
    code = main(["check", "candidate.yaml", "--boundary", "boundary.yaml", "--reference-semantics"])
    captured = capsysbinary.readouterr()
    assert code == exit_code
    assert captured.out == stdout.encode("utf-8")
    assert captured.err == b""

"""What a CLI cold start imports: no MCP stack outside ``serve``/``demo``, no Z3 without
network rules, and a receipt that still names the Z3 version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import z3

import server
from prover import api
from prover.budget import Budget
from prover.checks.network import check_network_mode
from prover.policy.loader import load_policy
from prover.policy.normalize import normalize
from prover.results import CheckOutcome
from server import http_security
from server.commands import serve

REPO_ROOT = Path(server.__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
SEED_CANDIDATE = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n"
SEED_BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n    - /etc\n"
ROOT_CANDIDATE = SEED_CANDIDATE + "process:\n  run_as_user: root\n"
SANDBOX_BOUNDARY = SEED_BOUNDARY + "process:\n  run_as_user: sandbox\n"
NETWORK_BOUNDARY = (
    SEED_BOUNDARY
    + """\
network_policies:
  api:
    endpoints:
      - {host: api.example.com, port: 443, protocol: rest, enforcement: enforce, access: full}
    binaries:
      - {path: /usr/bin/curl}
"""
)
PROPOSAL = json.dumps(
    {"rule_name": "anon", "rule": {"endpoints": [{"host": "example.com", "port": 443}]}}
)

#: Packages and modules of the MCP server; only ``serve`` and ``demo`` may load them.
MCP_PACKAGES = frozenset(
    {"mcp", "mcp_types", "starlette", "uvicorn", "httpx", "httpx2", "sse_starlette", "anyio"}
)
SERVER_ONLY = frozenset(
    {
        "server.app",
        "server.cache",
        "server.catalogue",
        "server.demo",
        "server.examples",
        "server.http_security",
        "server.models",
        "server.prompts",
        "server.resources",
        "server.serving",
        "server.tools",
    }
)
#: What a pair without network rules never needs.
NETWORK_ONLY = frozenset({"z3", "prover.network_solver", "prover.checks.network"})

# Runs the command line in a fresh interpreter and reports which modules it loaded.
PROBE = """
import json, sys
from server.cli import main
status = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(status)
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cold_start")
    for name, text in {
        "seed-candidate.yaml": SEED_CANDIDATE,
        "seed-boundary.yaml": SEED_BOUNDARY,
        "root-candidate.yaml": ROOT_CANDIDATE,
        "sandbox-boundary.yaml": SANDBOX_BOUNDARY,
        "current.yaml": SEED_BOUNDARY,
        "proposal.json": PROPOSAL,
    }.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _loaded_modules(folder: Path, argv: list[str], expected_status: int) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=folder,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == expected_status, done.stdout
    marker = done.stderr.rpartition("\nMODULES ")[2]
    return set(json.loads(marker))


def _mcp_modules(modules: set[str]) -> list[str]:
    return sorted(
        m
        for m in modules
        if m.split(".")[0] in MCP_PACKAGES
        or any(m == s or m.startswith(s + ".") for s in SERVER_ONLY)
    )


SEED = ["check", "seed-candidate.yaml", "--boundary", "seed-boundary.yaml"]


@pytest.mark.parametrize(
    ("argv", "status", "needs_network"),
    [
        (SEED, 0, False),
        ([*SEED, "-o", "json"], 0, False),
        (["check", "missing.yaml", "--boundary", "seed-boundary.yaml", "-o", "json"], 2, False),
        (["check", "root-candidate.yaml", "--boundary", "sandbox-boundary.yaml"], 1, False),
        (["explain", "seed-candidate.yaml", "--boundary", "seed-boundary.yaml"], 0, False),
        (["assess", "--current", "current.yaml", "--proposal", "proposal.json"], 0, True),
    ],
    ids=["check-text", "check-json", "check-file-error", "check-exceeds", "explain", "assess"],
)
def test_commands_but_serve_and_demo_skip_the_mcp_stack_and_z3_without_network_rules(
    files: Path, argv: list[str], status: int, needs_network: bool
) -> None:
    modules = _loaded_modules(files, argv, status)
    assert _mcp_modules(modules) == []
    if not needs_network:
        assert sorted(modules & NETWORK_ONLY) == []


def test_building_the_serve_parser_imports_nothing_of_the_mcp_stack(files: Path) -> None:
    modules = _loaded_modules(files, ["serve", "--help"], 0)
    assert _mcp_modules(modules) == []


def test_the_receipt_names_the_z3_version_the_bindings_report() -> None:
    check = api.check_boundary(SEED_CANDIDATE, SEED_BOUNDARY)
    assert api.z3_version() == z3.get_version_string()
    assert check.receipt.z3_version == z3.get_version_string()


@pytest.mark.parametrize(
    "distribution",
    [metadata.PackageNotFoundError("z3-solver"), "unknown", "4.x.1"],
    ids=["not-installed", "no-dots", "not-numeric"],
)
def test_the_z3_version_comes_from_the_bindings_when_the_distribution_cannot_say(
    monkeypatch: pytest.MonkeyPatch, distribution: Exception | str
) -> None:
    def version(name: str) -> str:
        assert name == "z3-solver"
        if isinstance(distribution, Exception):
            raise distribution
        return distribution

    monkeypatch.setattr(metadata, "version", version)
    api.z3_version.cache_clear()
    try:
        assert api.z3_version() == z3.get_version_string()
    finally:
        api.z3_version.cache_clear()


@pytest.mark.parametrize("boundary", [SEED_BOUNDARY, NETWORK_BOUNDARY], ids=["none", "rest"])
@pytest.mark.parametrize("identity", [False, True])
def test_a_candidate_without_network_rules_gets_the_network_checks_own_answer(
    boundary: str, identity: bool
) -> None:
    # The boundary check skips the network checks for such a candidate and answers
    # "within, structural" itself; this pins that answer to theirs.
    candidate = normalize(load_policy(SEED_CANDIDATE))
    outcome = check_network_mode(
        candidate, normalize(load_policy(boundary)), identity=identity, budget=Budget(10_000)
    )
    assert outcome == CheckOutcome.within(decided_by="structural")
    assert api.check_boundary(SEED_CANDIDATE, boundary).outcome.decided_by == "structural"


def test_serve_spells_the_environment_variables_as_http_security_does() -> None:
    assert (serve.TOKEN_ENV, serve.ALLOWED_HOSTS_ENV) == (
        http_security.TOKEN_ENV,
        http_security.ALLOWED_HOSTS_ENV,
    )

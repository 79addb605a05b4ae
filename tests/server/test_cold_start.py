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
from prover.checks.network import check_network_mode
from prover.policy.loader import load_policy
from prover.policy.normalize import normalize
from prover.results import CheckOutcome
from prover.run.budget import Budget
from server import http_security
from server.commands import serve

REPO_ROOT = Path(server.__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
SEED_CANDIDATE = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n"
SEED_BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n    - /etc\n"
# An exceed without network rules (run_as_user: root, once used here, is refused by the
# runtime's validator: an error).
ROOT_CANDIDATE = SEED_CANDIDATE + "landlock:\n  compatibility: best_effort\n"
SANDBOX_BOUNDARY = SEED_BOUNDARY + "landlock:\n  compatibility: hard_requirement\n"
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
# A pair the solver decides (the acceptance case ip-cidr-containment-3-within).
CIDR_CANDIDATE = """\
version: 1
network_policies:
  api:
    endpoints:
    - {host: api.example.com, ports: [443], allowed_ips: [10.0.0.0/8]}
    binaries:
    - path: /usr/bin/curl
"""
CIDR_BOUNDARY = CIDR_CANDIDATE.replace("[10.0.0.0/8]", "[10.0.0.0/9, 10.128.0.0/9]")
ENVIRONMENT = """\
version: 1
workdir: /sandbox
"""
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
#: What a pair without network rules never needs (nor tiny texts the reader's fast
#: path, whose patterns cost more to compile than they save there).
NETWORK_ONLY = frozenset(
    {"z3", "prover.encode.solver", "prover.checks.network", "prover.policy.simple_yaml"}
)
#: What ``check`` loads only when it uses it: pydantic (an invalid policy's message, a
#: document the fast loader declines, environment evidence), the environment evidence,
#: explain and proposal, and ``importlib.metadata``.
CHECK_ON_DEMAND = ("pydantic", "pydantic_core", "prover.environment", "prover.explain")
CHECK_ON_DEMAND += ("prover.proposal", "importlib.metadata", "prover.results.schema")

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
        "cidr-candidate.yaml": CIDR_CANDIDATE,
        "cidr-boundary.yaml": CIDR_BOUNDARY,
        "invalid.yaml": "version: 1\nfilesystem_policy:\n  read_only: [usr]\n",
        "environment.yaml": ENVIRONMENT,
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


def _on_demand(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules if any(m == p or m.startswith(p + ".") for p in CHECK_ON_DEMAND)
    )


@pytest.mark.parametrize(
    ("argv", "status", "allowed"),
    [
        (SEED, 0, ()),
        ([*SEED, "-o", "json"], 0, ()),
        ([*SEED, "--reference-semantics"], 0, ()),
        ([*SEED, "--reference-semantics", "-o", "json"], 0, ()),
        (["check", "missing.yaml", "--boundary", "seed-boundary.yaml"], 2, ()),
        (["check", "missing.yaml", "--boundary", "seed-boundary.yaml", "-o", "json"], 2, ()),
        (["check", "root-candidate.yaml", "--boundary", "sandbox-boundary.yaml"], 1, ()),
        (["check", "invalid.yaml", "--boundary", "seed-boundary.yaml"], 2, ("pydantic",)),
        ([*SEED, "--environment", "environment.yaml"], 0, ("pydantic", "environment")),
        ([*SEED, "--environment", "missing.yaml", "-o", "json"], 2, ()),
    ],
    ids=[
        "text",
        "json",
        "reference",
        "reference-json",
        "file-error",
        "file-error-json",
        "exceeds",
        "invalid-policy",
        "environment",
        "environment-file-error",
    ],
)
def test_check_loads_pydantic_and_the_environment_only_when_it_uses_them(
    files: Path, argv: list[str], status: int, allowed: tuple[str, ...]
) -> None:
    modules = _loaded_modules(files, argv, status)
    assert _mcp_modules(modules) == []
    loaded = _on_demand(modules)
    if "pydantic" not in allowed:
        assert loaded == []
    else:
        # The schema's error message, or the evidence document, needs pydantic; still
        # nothing of explain, proposal or the result models.
        assert "pydantic" in loaded
        assert not [m for m in loaded if m.startswith(("prover.explain", "prover.proposal"))]
        assert ("prover.environment" in loaded) == ("environment" in allowed)
    assert sorted(modules & NETWORK_ONLY) == []


def test_a_pair_the_solver_decides_loads_z3_but_not_pydantic(files: Path) -> None:
    argv = ["check", "cidr-candidate.yaml", "--boundary", "cidr-boundary.yaml", "-o", "json"]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=files,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["receipt"]["decided_by"] == "z3"
    modules = set(json.loads(done.stderr.rpartition("\nMODULES ")[2]))
    assert "z3" in modules
    assert _on_demand(modules) == [] and _mcp_modules(modules) == []


def test_building_the_serve_parser_imports_nothing_of_the_mcp_stack(files: Path) -> None:
    modules = _loaded_modules(files, ["serve", "--help"], 0)
    assert _mcp_modules(modules) == []


def test_the_receipt_names_the_z3_version_the_bindings_report() -> None:
    check = api.check_boundary(SEED_CANDIDATE, SEED_BOUNDARY)
    assert api.z3_version() == z3.get_version_string()
    assert check.receipt.z3_version == z3.get_version_string()


@pytest.mark.parametrize(
    "distribution",
    [None, "unknown", "4.x.1"],
    ids=["not-installed", "no-dots", "not-numeric"],
)
def test_the_z3_version_comes_from_the_bindings_when_the_distribution_cannot_say(
    monkeypatch: pytest.MonkeyPatch, distribution: str | None
) -> None:
    asked: list[str] = []

    def version(name: str) -> str | None:
        asked.append(name)
        return distribution

    monkeypatch.setattr(api, "distribution_version", version)
    api.z3_version.cache_clear()
    try:
        assert api.z3_version() == z3.get_version_string()
    finally:
        api.z3_version.cache_clear()
    assert asked == ["z3-solver"]


def test_distribution_versions_read_as_importlib_metadata_reads_them() -> None:
    for name in ("z3-solver", "PyYAML", "pydantic", "pydantic-core"):
        assert api.distribution_version(name) == metadata.version(name)
    assert api.distribution_version("no-such-distribution-here") is None


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

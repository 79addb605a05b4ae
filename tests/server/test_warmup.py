"""The server's warm-up: a first tool call imports nothing of the prover (issue 24).

A first call imported the check stages, the runner and the extended reading (the rest
comes with ``create_server``) outside any deadline. Counted, not timed: the modules a fresh
interpreter loads during its first calls after :func:`server.warmup.warm_up`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import server

REPO_ROOT = Path(server.__file__).resolve().parent.parent

SCRIPT = """
import anyio, json, sys
from server.app import create_server
from server.warmup import warm_up
if sys.argv[1] == "warm":
    warm_up()
NET = '''version: 1
network_policies:
  api:
    endpoints:
    - {host: api.example.com, ports: [443], allowed_ips: [10.0.0.0/8]}
    binaries:
    - path: /usr/bin/curl
'''
WIDE = NET.replace("[10.0.0.0/8]", "[0.0.0.0/0]")
ENV = "version: 1\\nworkdir: /sandbox\\n"
PROPOSAL = json.dumps({"rule_name": "p", "rule": {"endpoints": [{"host": "a.example.com",
    "port": 443}], "binaries": [{"path": "/usr/bin/curl"}]}})
CALLS = [
    ("check_boundary", {"candidate": WIDE, "boundary": NET, "environment": ENV}),
    ("assess_proposal", {"current": NET, "proposal": PROPOSAL, "boundary": NET}),
    ("explain_counterexample", {"candidate": WIDE, "boundary": NET, "environment": ENV}),
]
async def main():
    srv = create_server()
    before = set(sys.modules)
    for name, arguments in CALLS:
        await srv.call_tool(name, {**arguments, "timeout_ms": 30000})
    new = sorted(m for m in set(sys.modules) - before if m.startswith(("prover", "z3")))
    print(json.dumps(new))
anyio.run(main)
"""


def _first_call_imports(mode: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_after_the_warm_up_first_calls_import_nothing_of_the_prover() -> None:
    cold = _first_call_imports("cold")
    assert {"prover.run.runner", "prover.checks.boundary", "prover.extended.check"} <= set(cold)
    assert _first_call_imports("warm") == []


def test_serve_warms_up_and_freezes_what_it_loaded_before_serving() -> None:
    """After the warm-up a full cyclic collection walked some 100,000 objects (about
    100 ms, in the middle of a call); frozen, it skips them."""
    source = (REPO_ROOT / "server" / "commands" / "serve.py").read_text(encoding="utf-8")
    assert source.index("warm_up()") < source.index("gc.freeze()") < source.index("run_stdio(")

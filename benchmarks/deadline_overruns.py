"""How late each tool answers past its deadline on the inputs of issue 24, first calls included.

    python benchmarks/deadline_overruns.py [--timeout-ms 200] [--runs 3] [--json FILE]

At 200 ms (the issue's deadline) the cases may now finish in time; ``--timeout-ms 50``
makes each of them stop in the middle of its work.

For every run a fresh ``python -m server`` (stdio, result cache off) is started, and
each case is called twice on it: the first call of the process, then a second one (its
policy texts made new by a trailing comment, so that nothing read is reused). A
case is a tool and an input within the limits that used to overrun a 200 ms deadline:

- ``fs-9000``: filesystem lists of 9,000 paths per side, candidate and boundary disjoint
  (2.4 s before: every path compared with every entry);
- ``env-10000``: an environment document of 10,000 symlinks and 10,000
  ``symlinks_complete_beneath`` entries, 3,000 paths per policy (2.5-3 s late before,
  explain 2.1 s: each path compared with every entry, the document read outside the
  deadline);
- ``first-*``: the first call of a fresh server on a small input (167 and 191 ms late
  for assess and explain before: imports outside the deadline).

*Overrun* is the latency the client measures (request to answer, over stdio) minus
``timeout_ms``, never below zero; the client compiles the tools' output schemas before
(its own first-result cost). For ``check_boundary`` the server's own figure (its
receipt's ``elapsed_ms`` minus ``timeout_ms``) is printed too. Prints, per case, the
overrun of the first and the second call (max over runs) and the answers. Everything
runs locally; nothing listens.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

REPO_ROOT = str(Path(__file__).resolve().parent.parent)
#: Arguments that are policy texts (YAML: a trailing comment changes only the bytes).
TEXTS = ("candidate", "boundary", "current")
NETWORK = """\
network_policies:
  api:
    endpoints:
    - {host: api.example.com, port: 443}
    binaries:
    - path: /usr/bin/curl
"""
PROPOSAL = json.dumps(
    {
        "rule_name": "new",
        "rule": {
            "endpoints": [{"host": "example.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
)


def fs_policy(read_only: list[str], read_write: list[str] = (), network: bool = False) -> str:  # type: ignore[assignment]
    text = "version: 1\nfilesystem_policy:\n  read_only:\n"
    text += "".join(f"    - {path}\n" for path in read_only)
    if read_write:
        text += "  read_write:\n" + "".join(f"    - {path}\n" for path in read_write)
    return text + (NETWORK if network else "")


def environment_document(symlinks: int, complete: int) -> str:
    return json.dumps(
        {
            "version": 1,
            "workdir": "/sandbox",
            "symlinks": {f"/l/d{i}/link": f"../d{i + 1}" for i in range(symlinks)},
            "symlinks_complete_beneath": [f"/c/e{i}" for i in range(complete)] + ["/l"],
        }
    )


def cases(timeout_ms: int) -> dict[str, tuple[str, dict[str, Any]]]:
    fs_candidate = fs_policy([f"/a/r{i}" for i in range(9000)], [f"/a/w{i}" for i in range(9000)])
    fs_boundary = fs_policy([f"/b/r{i}" for i in range(9000)], [f"/b/w{i}" for i in range(9000)])
    env = environment_document(10_000, 9_999)
    env_candidate = fs_policy([f"/l/d{i}/link/x" for i in range(3000)], network=True)
    env_boundary = fs_policy([f"/c/e{i}" for i in range(3000)] + ["/l"], network=True)
    env_current = fs_policy([f"/l/d{i}/link/x" for i in range(250)], network=True)
    small = fs_policy(["/usr"], network=True)
    wide = fs_policy(["/usr", "/etc"], network=True)
    t = {"timeout_ms": timeout_ms}
    return {
        "first-check": ("check_boundary", {"candidate": wide, "boundary": small, **t}),
        "first-assess": ("assess_proposal", {"current": small, "proposal": PROPOSAL, **t}),
        "first-explain": ("explain_counterexample", {"candidate": wide, "boundary": small, **t}),
        "fs-9000-check": (
            "check_boundary",
            {"candidate": fs_candidate, "boundary": fs_boundary, **t},
        ),
        "fs-9000-explain": (
            "explain_counterexample",
            {"candidate": fs_candidate, "boundary": fs_boundary, **t},
        ),
        "env-10000-check": (
            "check_boundary",
            {"candidate": env_candidate, "boundary": env_boundary, "environment": env, **t},
        ),
        "env-10000-explain": (
            "explain_counterexample",
            {"candidate": env_candidate, "boundary": env_boundary, "environment": env, **t},
        ),
        "env-10000-assess": (  # the gateway takes at most 256 paths in a policy
            "assess_proposal",
            {
                "current": env_current,
                "proposal": PROPOSAL,
                "boundary": env_boundary,
                "environment": env,
                **t,
            },
        ),
    }


async def _one_server(name: str, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "server"],
        env={**os.environ, "PYTHONPATH": REPO_ROOT, "POLICY_PROVER_CACHE_SIZE": "0"},
    )
    rows = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        # The client's own first-result cost (compiling each output schema, 60-70 ms a
        # tool in jsonschema) is not the server's: pay it before timing anything.
        for tool_name, schema in session._tool_output_schemas.items():
            if schema is not None:
                session._output_schema_validator(tool_name, schema)
        for call in ("first", "second"):
            if call == "second":  # new texts: nothing the first call read is reused
                arguments = {
                    key: value + "\n# second call\n" if key in TEXTS else value
                    for key, value in arguments.items()
                }
            started = time.monotonic()
            result = await session.call_tool(tool, arguments)
            latency_ms = (time.monotonic() - started) * 1000
            content = result.structured_content or {}
            elapsed = (content.get("receipt") or {}).get("elapsed_ms")  # check_boundary's
            rows.append(
                {
                    "call": call,
                    "latency_ms": round(latency_ms, 1),
                    "overrun_ms": round(max(0.0, latency_ms - arguments["timeout_ms"]), 1),
                    "server_overrun_ms": None
                    if elapsed is None
                    else round(max(0.0, elapsed - arguments["timeout_ms"]), 1),
                    "result": content.get("result") or content.get("decision"),
                    "is_error": result.is_error,
                }
            )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout-ms", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()
    figures: dict[str, Any] = {"timeout_ms": args.timeout_ms, "runs": args.runs, "cases": {}}
    for name, (tool, arguments) in cases(args.timeout_ms).items():
        runs = [anyio.run(_one_server, name, tool, arguments) for _ in range(args.runs)]
        figures["cases"][name] = {
            "tool": tool,
            "first_overrun_ms_max": max(r[0]["overrun_ms"] for r in runs),
            "second_overrun_ms_max": max(r[1]["overrun_ms"] for r in runs),
            "server_overrun_ms_max": max(
                (row["server_overrun_ms"] for r in runs for row in r),
                default=None,
                key=lambda v: -1 if v is None else v,
            ),
            "results": sorted({str(row["result"]) for r in runs for row in r}),
            "errors": sum(row["is_error"] for r in runs for row in r),
        }
        print(name, json.dumps(figures["cases"][name]), flush=True)
    figures["load_average"] = [round(v, 2) for v in (*load_before, *os.getloadavg())]
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

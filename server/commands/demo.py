"""``policy-prover demo``: start the server over stdio and show what an agent sees."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="start the MCP server and run every tool on the bundled example policies",
        description=(
            "Start 'policy-prover serve' over stdio as an MCP client would, list its tools, "
            "run each tool on the bundled example policies and print what an agent sees."
        ),
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from server.demo import run_demo

    status: int = anyio.run(run_demo, sys.stdout)
    return status

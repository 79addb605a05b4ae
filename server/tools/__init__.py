"""The MCP tools, one module each.

A tool module exposes ``register(server: MCPServer) -> None``. To add a tool, write its
module and list it in :data:`TOOL_MODULES`; :func:`server.app.create_server` registers
every listed module, and ``policy-prover demo`` demonstrates it once
:mod:`server.demo` has steps for it.
"""

from __future__ import annotations

import importlib

from mcp.server.mcpserver import MCPServer

TOOL_MODULES: tuple[str, ...] = (
    "server.tools.check_boundary",
    "server.tools.assess_proposal",
    "server.tools.explain_counterexample",
)


def register_tools(server: MCPServer) -> None:
    from server.tools.schema import compact_published_schemas

    for name in TOOL_MODULES:
        importlib.import_module(name).register(server)
    compact_published_schemas(server)

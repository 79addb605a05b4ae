"""The MCP server ``policy-prover``: tools, resources, prompts and the ``/health`` route.

``create_server()`` builds a fresh server; transports are chosen by
``policy-prover serve`` (:mod:`server.commands.serve`). Process-wide state, such as the
limit on concurrent checks, lives in :mod:`prover.run.runner`, not in a lifespan, because
the lifespan runs once per connection on stdio and SSE.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from prover import __version__
from server.prompts import register_prompts
from server.resources import EXAMPLES_URI, RESULTS_URI, SCHEMA_URI, register_resources
from server.tools import register_tools

NAME = "policy-prover"
HEALTH_PATH = "/health"

INSTRUCTIONS = f"""\
policy-prover gives formal (Z3) answers about OpenShell sandbox policies. \
check_boundary: prove that a candidate policy allows nothing beyond a boundary policy \
(call it before giving a policy to a subagent or applying a change); only \
within_boundary passes, every other result is a failure to act on. assess_proposal: \
list the risky access a proposed network rule adds to the current policy. \
explain_counterexample: explain a check result in plain words and get a minimal fix \
that the prover has re-verified. Reference: {RESULTS_URI} (results and reason codes), \
{SCHEMA_URI} (policy format), {EXAMPLES_URI} (example policies)."""


def create_server() -> MCPServer:
    server = MCPServer(
        NAME,
        title="Policy prover",
        description="Z3-backed containment checks for OpenShell sandbox policies.",
        instructions=INSTRUCTIONS,
        version=__version__,
    )
    register_tools(server)
    register_resources(server)
    register_prompts(server)
    server.custom_route(HEALTH_PATH, methods=["GET"], include_in_schema=False)(health)
    return server


async def health(request: Request) -> Response:
    """Liveness and readiness: the process serves HTTP. Never requires the token."""
    return JSONResponse({"status": "ok", "server": NAME, "version": __version__})

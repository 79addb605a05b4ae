"""The ``check_boundary`` tool: the CLI's ``check --output json`` over MCP.

The check runs through :func:`prover.run.runner.check_boundary_async`: in a worker thread,
under the process-wide limit on concurrent checks, so the event loop keeps serving other
requests; when the client cancels (or the transport drops) the Z3 work is interrupted and
the slot freed. Invalid policies are ordinary ``error`` results; only a failure of the
server itself becomes an ``isError`` tool result, and nothing but a completed check can
ever say ``within_boundary``.
"""

from __future__ import annotations

import logging
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from prover.results.report import boundary_report, boundary_text
from server.cache import attach_cache, cache_for_request, cache_key_async
from server.environment_default import EnvironmentArgument
from server.models import BoundaryCheckResult
from server.tools.common import (
    internal_error,
    progress_reporter,
    read_only_annotations,
    timeout_argument,
)

log = logging.getLogger(__name__)

NAME = "check_boundary"
TITLE = "Check a policy against a boundary"
DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 60_000


INPUTS = {"candidate": "candidate", "boundary": "boundary"}

DESCRIPTION = """\
\
Prove that a candidate OpenShell sandbox policy allows nothing beyond a boundary policy. \
Pass full policy texts (YAML/JSON, version: 1), not paths. Boundary: your own policy when \
vetting a subagent's; the environment's maximum policy when checking a change (candidate \
= the complete policy after it).
`result`: within_boundary is the only PASS (not "minimal" or "safe"). \
exceeds_boundary: `counterexample` is one action the candidate allows and the boundary \
refuses; next, explain_counterexample gives every violation and a verified fix. \
unsupported, inconclusive: FAIL, never a pass; `reason` says what to change \
(solver_timeout: retry with a larger timeout_ms). error: invalid policy; `reason` names \
each bad field. `receipt`: SHA-256 of each text. Codes: \
policy-prover://reference/results; format: policy-prover://schema/policy.\
"""

ANNOTATIONS = read_only_annotations(TITLE)
TimeoutMs = timeout_argument(MAX_TIMEOUT_MS, "the check")


async def check_boundary(
    candidate: Annotated[
        str,
        Field(description="The policy to vet (text)."),
    ],
    boundary: Annotated[
        str,
        Field(description="The most access the candidate may have (text)."),
    ],
    ctx: Context,
    timeout_ms: TimeoutMs = DEFAULT_TIMEOUT_MS,
    environment: EnvironmentArgument = None,
) -> Annotated[CallToolResult, BoundaryCheckResult]:
    from prover.run import runner
    from server.environment_default import environment_for_call

    environment = environment_for_call(environment)

    cache = cache_for_request(ctx)
    key = (
        None
        if cache is None
        else await cache_key_async(candidate, boundary, timeout_ms, environment)
    )
    if cache is not None and key is not None:
        hit = cache.get(key)
        if hit is not None:
            log.info("check_boundary answered from the result cache (key %s)", key[:16])
            return CallToolResult(
                content=[TextContent(type="text", text=hit.text)],
                structured_content=hit.document,
            )
    failure: Exception | None = None
    try:
        check = await runner.check_boundary_async(
            candidate,
            boundary,
            timeout_ms=timeout_ms,
            environment=environment,
            while_slow=progress_reporter(ctx, timeout_ms, "checking"),
        )
    except Exception as exc:  # kept as a value: an isError result
        failure = exc
    if failure is None:
        try:
            document = boundary_report(check.outcome, inputs=INPUTS, receipt=check.receipt)
            text = boundary_text(check.outcome, check.receipt)
        except Exception as exc:
            failure = exc
    if failure is not None:
        log.error("check_boundary failed inside the server", exc_info=failure)
        return internal_error(failure)
    if cache is not None and key is not None:
        cache.put(key, text, document)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=document
    )


def register(server: MCPServer) -> None:
    attach_cache(server)
    server.add_tool(
        check_boundary,
        name=NAME,
        title=TITLE,
        description=DESCRIPTION,
        annotations=ANNOTATIONS,
    )

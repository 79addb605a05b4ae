"""The ``explain_counterexample`` tool: ``explain`` over MCP, compact by default
(:mod:`prover.explain.compact`); ``detail="full"`` attaches the CLI's ``explain --output
json`` object as ``analysis``.

The explanation runs its boundary checks in a worker thread through
:func:`prover.run.runner.run_in_worker`, under the process-wide limit on concurrent checks and
one deadline for the whole explanation; a client's cancellation interrupts Z3. A fix is
only ever returned when the prover proved it; a failure of the server itself is an
``isError`` result, never a verdict.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from prover.explain.compact import CompactExplanation, Detail
from server.environment_default import EnvironmentArgument
from server.tools.common import (
    internal_error,
    progress_reporter,
    read_only_annotations,
    timeout_argument,
)

log = logging.getLogger(__name__)

NAME = "explain_counterexample"
TITLE = "Explain a check result and propose a verified fix"
DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 120_000
MAX_VIOLATIONS = 100
MAX_NEEDS = 20

DESCRIPTION = """\
After check_boundary fails: every violation, the candidate entries granting it, and a \
fix the prover re-checked. Pass the same full policy texts (optional `result`: the \
earlier result, re-verified). Compact by default, one line per violation (`what`, \
`granted_by` paths in the original candidate, `closest` boundary entry and the \
dimensions it fails on, `fix` edits); `detail: "full"` adds `analysis`. Fixes narrow \
before deleting (drop a binary, host, port, method, path, write access) and keep as much \
as the boundary allows; `needs` (requests your task depends on) are kept in every fix, \
and a need beyond the boundary is reported with the closest boundary entry. \
`fix_verified` true: `fixed_candidate` was proved within the boundary and within the \
candidate (`verification`); use it, then check_boundary. Otherwise read `blockers` (each \
with a `hint`) and `stopped_because`; `partial_candidate` has the fixes so far. \
unsupported/inconclusive are never a pass.\
"""

ANNOTATIONS = read_only_annotations(TITLE)
TimeoutMs = timeout_argument(MAX_TIMEOUT_MS, "the whole explanation")


async def explain_counterexample(
    candidate: Annotated[
        str,
        Field(description="The policy to explain (text)."),
    ],
    boundary: Annotated[
        str,
        Field(description="The most access the candidate may have (text)."),
    ],
    ctx: Context,
    result: Annotated[
        str | dict[str, Any] | None,
        Field(description="An earlier check_boundary or assess_proposal result (JSON)."),
    ] = None,
    max_violations: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_VIOLATIONS,
            description="At most this many violations.",
        ),
    ] = 20,
    detail: Annotated[
        Detail,
        Field(description="full adds `analysis`."),
    ] = "compact",
    timeout_ms: TimeoutMs = DEFAULT_TIMEOUT_MS,
    environment: EnvironmentArgument = None,
    needs: Annotated[
        list[dict[str, Any]] | None,
        Field(
            max_length=MAX_NEEDS,
            description="Requests the fix must keep, each {host, port, binary?, method?, "
            "path?} or {path, access: read|write}; `needs` in the result says which were kept "
            "or exceed the boundary.",
        ),
    ] = None,
) -> Annotated[CallToolResult, CompactExplanation]:
    from prover.run import runner
    from server.environment_default import environment_for_call

    environment = environment_for_call(environment)
    from prover.explain import explain, render_text
    from prover.explain.compact import compact, render_compact_text
    from prover.explain.core import explain_input_error, explain_stopped
    from prover.explain.models import Explanation
    from prover.explain.needs import NeedsError, read_needs
    from prover.run.budget import Budget, BudgetExhausted

    failure: Exception | None = None
    explanation: Explanation | None = None
    try:
        read_needs(needs)
    except NeedsError as exc:  # bad input: an error result naming the field
        explanation = explain_input_error(str(exc), candidate=candidate, boundary=boundary)
    try:
        if explanation is None:
            explanation = await runner.run_in_worker(
                lambda budget: explain(
                    candidate,
                    boundary,
                    result=result,
                    max_violations=max_violations,
                    budget=budget,
                    environment=environment,
                    needs=needs,
                ),
                Budget(timeout_ms),
                input_bytes=runner.text_bytes(
                    candidate,
                    boundary,
                    result if isinstance(result, str) else None,
                    environment,
                ),
                while_slow=progress_reporter(ctx, timeout_ms, "explaining"),
            )
    except BudgetExhausted as exc:  # never admitted: answered at the deadline
        explanation = explain_stopped(exc.cancelled, candidate=candidate, boundary=boundary)
    except Exception as exc:  # kept as a value: an isError result, not a crash
        failure = exc
    if failure is None and explanation is not None:
        try:
            short = compact(explanation, detail)
            document = short.model_dump(mode="json")
            text = render_text(explanation) if detail == "full" else render_compact_text(short)
        except Exception as exc:
            failure = exc
    if failure is not None or explanation is None:
        error = failure or RuntimeError("no explanation was produced")
        log.error("explain_counterexample failed inside the server", exc_info=error)
        return internal_error(error)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=document
    )


def register(server: MCPServer) -> None:
    server.add_tool(
        explain_counterexample,
        name=NAME,
        title=TITLE,
        description=DESCRIPTION,
        annotations=ANNOTATIONS,
    )

"""The ``explain_counterexample`` tool: the CLI's ``explain --output json`` over MCP.

The explanation runs its boundary checks in a worker thread through
:func:`prover.runner.run_in_worker`, under the process-wide limit on concurrent checks and
one deadline for the whole explanation; a client's cancellation interrupts Z3. A fix is
only ever returned when the prover proved it; a failure of the server itself is an
``isError`` result, never a verdict.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from prover.explain.models import Explanation
from server.environment_default import EnvironmentArgument
from server.tools.common import (
    internal_error,
    read_only_annotations,
    report_progress,
    timeout_argument,
)

log = logging.getLogger(__name__)

NAME = "explain_counterexample"
TITLE = "Explain a check result and propose a verified fix"
DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 120_000
MAX_VIOLATIONS = 100

DESCRIPTION = """\
Explain why a candidate OpenShell sandbox policy does or does not stay within a boundary \
policy, and get a fix the prover has already re-checked.

Call it after check_boundary returns anything but within_boundary (pass that JSON as \
`result` to have it re-verified), or directly with the two policy texts. It runs the \
boundary check itself; the fresh result is what it explains.

Read `result.result`, then:
- exceeds_boundary: `violations` lists every distinct action the candidate allows and the \
boundary refuses (up to max_violations), each with `granted_by` (the candidate entries \
and field paths responsible), `closest_boundary_rules` (the boundary entries that come \
closest, with every dimension they fail on: host, port, binary, identity_mode, layer, \
method, path, query, destination_ip, deny_rule, filesystem_access, process_field, \
landlock) and its `fix` (field-path edits; narrowing is preferred to deleting). When \
`fix_verified` is true, `fixed_candidate` is the whole fixed policy: the prover proved it \
within the boundary AND within the original candidate (the fix only narrows). Use it, or \
apply `fix` (all edits, in order), then call check_boundary on the result. When \
`fix_verified` is false, no fix is offered: read `explanation`, `blockers` and \
`enumeration.stopped_because`.
- unsupported / inconclusive: `blockers[0]` says what the reason means and gives concrete \
`rewrite_hints` and `locations` (field paths) so that the prover can decide. Never treat \
these results as a pass.
- within_boundary: nothing to fix; coverage lists the modeled domains. It does not mean \
the policy is minimal or safe for the task.
- error: a policy text is invalid; `blockers[0].locations` points at the field.

Also accepts an assess_proposal result as `result`: `proposal` then explains each finding \
category and what to change. Pass full policy texts (YAML or JSON with `version: 1`), not \
file paths.\
"""

ANNOTATIONS = read_only_annotations(TITLE)
TimeoutMs = timeout_argument(MAX_TIMEOUT_MS, "the whole explanation")


async def explain_counterexample(
    candidate: Annotated[
        str,
        Field(description="The policy to explain: complete policy text, YAML or JSON."),
    ],
    boundary: Annotated[
        str,
        Field(
            description="The most access the candidate may have: complete policy text, "
            "YAML or JSON."
        ),
    ],
    ctx: Context,
    result: Annotated[
        str | dict[str, Any] | None,
        Field(
            description="Optional: an earlier check_boundary result (or its counterexample, "
            "or an assess_proposal result), as JSON text or as an object. It is re-verified."
        ),
    ] = None,
    max_violations: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_VIOLATIONS,
            description="Find and fix at most this many violations (1 to 100).",
        ),
    ] = 20,
    timeout_ms: TimeoutMs = DEFAULT_TIMEOUT_MS,
    environment: EnvironmentArgument = None,
) -> Annotated[CallToolResult, Explanation]:
    from prover import runner
    from server.environment_default import environment_for_call

    environment = environment_for_call(environment)
    from prover.budget import Budget, BudgetExhausted
    from prover.explain import explain, render_text
    from prover.explain.core import explain_stopped

    failure: Exception | None = None
    explanation: Explanation | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(report_progress, ctx, timeout_ms, "explaining")
        try:
            explanation = await runner.run_in_worker(
                lambda budget: explain(
                    candidate,
                    boundary,
                    result=result,
                    max_violations=max_violations,
                    budget=budget,
                    environment=environment,
                ),
                Budget(timeout_ms),
                input_bytes=runner.text_bytes(
                    candidate,
                    boundary,
                    result if isinstance(result, str) else None,
                    environment,
                ),
            )
        except BudgetExhausted as exc:  # never admitted: answered at the deadline
            explanation = explain_stopped(exc.cancelled, candidate=candidate, boundary=boundary)
        except Exception as exc:  # kept as a value: an isError result, not a crash
            failure = exc
        finally:
            tg.cancel_scope.cancel()
    if failure is None and explanation is not None:
        try:
            document = explanation.model_dump(mode="json")
            text = render_text(explanation)
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

"""The ``assess_proposal`` tool: the CLI's ``assess --output json`` over MCP.

The whole assessment (merge, reachability model, boundary checks) runs through
:func:`prover.runner.run_in_worker`: in a worker thread under the process-wide limit, with
one budget whose cancellation or deadline interrupts Z3. Invalid input is an ordinary
structured ``error`` result (the CLI's JSON error envelope); only a failure of the server
itself becomes an ``isError`` tool result.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    WrapValidator,
)

from prover.proposal.assessment import ProposalAssessment
from server.commands.assess import error_document, stopped_document, stopped_text
from server.environment_default import EnvironmentArgument
from server.models import BoundaryCheckResult
from server.tools.common import internal_error, read_only_annotations, timeout_argument

log = logging.getLogger(__name__)

NAME = "assess_proposal"
TITLE = "Assess a proposed network rule"
DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 60_000

DESCRIPTION = """\
Before proposing a network rule for your OpenShell sandbox, find out what risky access it \
adds to the current policy. The rule is merged into the current policy as the gateway \
does, and only the new findings are reported. Pass texts, not file paths: `current` \
(the effective policy, YAML/JSON), `proposal` (the policy.local body {intent_summary, \
operations: [{addRule: ...}]} or {rule_name, rule}), optionally `credentials` (a list of \
{name, type, target_hosts}) and `boundary` (a policy the result must stay within).

Act on each finding `category`:
- link_local_reach: never approve. Remove the metadata / link-local reach \
(169.254.0.0/16, fe80::/10, metadata.google.internal) from the rule.
- l7_bypass_credentialed: a binary that ignores HTTP inspection (git, ssh, nc, ...) can \
use a credential on the host. Restrict the binaries to ones the proxy can inspect, or \
make the endpoint enforced REST (protocol: rest, enforcement: enforce).
- credential_reach_expansion: a binary gains credentialed reach to a new host:port. \
Confirm the credential should reach that host; otherwise narrow the host or binaries.
- capability_expansion: new HTTP methods on a credentialed host the binary already \
reached. Narrow methods and paths to what the task needs.
`security_notes` and `approval_blockers` also need a human; `auto_approvable` true means \
the gateway would auto-approve. `application_error` set: the rule cannot be merged or \
the result is invalid; fix the rule. A `result: error` object means invalid input: fix \
the text named in `reason`.

`adds_access`: false = proven redundant (the merged policy allows nothing the current \
one does not), true = it adds access, null = undecided (see `warnings`). `boundary` \
(when given): the check of the merged policy against it; only `result: within_boundary` \
passes, otherwise narrow the rule. Both verdicts are independent: passing one does not \
imply passing the other. `needs_review` false means nothing new needs a human.\
"""

ANNOTATIONS = read_only_annotations(TITLE)
TimeoutMs = timeout_argument(MAX_TIMEOUT_MS, "the boundary checks")


def _none_or_text(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return None if value is None else handler(value)


#: An optional text argument. The SDK JSON-decodes a string argument whose annotation is
#: not exactly ``str`` (a workaround for clients that send lists as JSON text), which
#: would turn a credentials list given as JSON text into a list and reject it. So the
#: annotation stays ``str``; a wrap validator admits null and the schema says so.
OptionalText = Annotated[
    str,
    WrapValidator(_none_or_text),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
]

INPUT_NAMES = ("current", "proposal", "credentials", "boundary", "accepted_risks", "registry")


class AssessedProposal(ProposalAssessment):
    """The assessment, with the boundary result typed for the output schema."""

    model_config = ConfigDict(extra="forbid")

    boundary: BoundaryCheckResult | None = Field(  # type: ignore[assignment]
        default=None,
        description="The check of the merged policy against the given boundary policy "
        "(inputs: merged_policy, boundary); null when no boundary was given or the proposal "
        "could not be applied. Only result within_boundary passes.",
    )


class AssessInputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    current: str
    proposal: str
    credentials: str | None
    boundary: str | None
    accepted_risks: str | None
    registry: str | None


class AssessError(BaseModel):
    """Invalid input: nothing was assessed."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    prover_version: str
    check: Literal["proposal"]
    result: Literal["error"]
    exit_code: Literal[2]
    inputs: AssessInputs = Field(description="Which arguments were given.")
    reason_code: Literal["invalid_input"]
    reason: str = Field(description="The problem, starting with the argument it is about.")


class AssessStopped(BaseModel):
    """The deadline (or a cancellation) stopped the assessment: nothing was assessed."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    prover_version: str
    check: Literal["proposal"]
    result: Literal["inconclusive"]
    exit_code: Literal[3]
    inputs: AssessInputs = Field(description="Which arguments were given.")
    reason_code: Literal["solver_timeout", "cancelled"]
    reason: str


class AssessProposalResult(RootModel[AssessedProposal | AssessError | AssessStopped]):
    """An assessment, an ``error`` object for invalid input, or an ``inconclusive`` one
    when the time limit ran out first."""

    model_config = ConfigDict(json_schema_extra={"type": "object"})


async def assess_proposal(
    current: Annotated[
        str, Field(description="The sandbox's current effective policy: YAML or JSON text.")
    ],
    proposal: Annotated[
        str,
        Field(
            description="The proposal: {intent_summary, operations: [{addRule: {ruleName, "
            "rule}}]} or {rule_name, rule}, as JSON or YAML text."
        ),
    ],
    credentials: Annotated[
        OptionalText,
        Field(description="Credentials in the sandbox: a list of {name, type, target_hosts}."),
    ] = None,
    boundary: Annotated[
        OptionalText,
        Field(description="Optional policy text the merged policy must stay within."),
    ] = None,
    accepted_risks: Annotated[
        OptionalText, Field(description="Optional accepted-risks document.")
    ] = None,
    registry: Annotated[
        OptionalText,
        Field(description="Optional binary descriptors extending the shipped registry."),
    ] = None,
    mode: Annotated[
        Literal["agent_authored", "mechanistic"],
        Field(description="Who wrote the rule: agent_authored (default) or mechanistic."),
    ] = "agent_authored",
    timeout_ms: TimeoutMs = DEFAULT_TIMEOUT_MS,
    environment: EnvironmentArgument = None,
) -> Annotated[CallToolResult, AssessProposalResult]:
    from prover import runner
    from server.environment_default import environment_for_call

    environment = environment_for_call(environment)
    from prover.budget import Budget, BudgetExhausted
    from prover.errors import ProverError
    from prover.proposal import assess_proposal as assess
    from prover.proposal import render_text
    from prover.text import escape_control

    given = dict(
        zip(
            INPUT_NAMES,
            (current, proposal, credentials, boundary, accepted_risks, registry),
            strict=True,
        )
    )
    inputs = {name: (name if text is not None else None) for name, text in given.items()}

    def work(budget: Budget) -> Any:
        return assess(
            current,
            proposal,
            credentials=credentials,
            mode=mode,
            accepted_risks=accepted_risks,
            registry=registry,
            boundary=boundary,
            budget=budget,
            environment=environment,
        )

    try:
        assessment = await runner.run_in_worker(
            work, Budget(timeout_ms), input_bytes=runner.text_bytes(*given.values(), environment)
        )
        document: dict[str, Any] = assessment.model_dump(mode="json")
        text = render_text(assessment)
    except BudgetExhausted as exc:
        document = stopped_document(exc.cancelled, timeout_ms, inputs)
        text = stopped_text(document)
    except ProverError as exc:
        document = error_document(str(exc), inputs)
        text = f"result: error\nreason: {escape_control(str(exc))}\n"
    except Exception as exc:
        log.error("assess_proposal failed inside the server", exc_info=exc)
        return internal_error(exc)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=document
    )


def register(server: MCPServer) -> None:
    server.add_tool(
        assess_proposal,
        name=NAME,
        title=TITLE,
        description=DESCRIPTION,
        annotations=ANNOTATIONS,
    )

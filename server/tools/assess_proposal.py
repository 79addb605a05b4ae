"""The ``assess_proposal`` tool: the CLI's ``assess --output json`` over MCP.

The whole assessment (merge, reachability model, boundary checks) runs through
:func:`prover.run.runner.run_in_worker`: in a worker thread under the process-wide limit, with
one budget whose cancellation or deadline interrupts Z3. Invalid input is an ordinary
structured ``error`` result (the CLI's JSON error envelope); only a failure of the server
itself becomes an ``isError`` tool result.
"""

from __future__ import annotations

import json
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
What risky access a proposed network rule adds: it is merged into `current` (the \
effective policy) as the gateway does; only new findings count. Pass texts, not paths. \
`proposal`: {intent_summary, operations: [{addRule: {ruleName, rule}}]} or {rule_name, \
rule}; endpoint `access` presets: read-only = GET, HEAD, OPTIONS; read-write = those + \
POST, PUT, PATCH; full = every method. `credentials`: a list of {name, type, \
target_hosts} (type is free text, e.g. api_key; only target_hosts matters). `boundary`: \
the environment's maximum policy (not the current one).
Act on `decision` (`decision_reason` says why): auto_approvable; accepted (only accepted \
risks); needs_review; blocked (never approve: a blocked destination or beyond the \
boundary; `fixed_proposal.proposal`, when found, is the narrowest rule proved \
acceptable: pass it as `proposal`); invalid (fix `application_error`). Findings: \
link_local_reach: remove metadata/link-local reach. l7_bypass_credentialed: a binary \
that bypasses HTTP inspection (git, ssh, nc) reaches a credentialed host: restrict binaries or use \
protocol: rest, enforcement: enforce. credential_reach_expansion: new credentialed \
host:port: confirm or narrow. capability_expansion: narrow new methods. `no_new_findings` \
is about tracked risks only; `adds_access`: true = new access, false = redundant, null = \
undecided. result: error = invalid input, see `reason`. Formats: \
policy-prover://schema/policy.\
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


def _object_as_text(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A JSON document given as an object (clients such as the MCP Inspector send
    JSON-looking arguments that way) is read as its JSON text."""
    return json.dumps(value) if isinstance(value, dict) else handler(value)


def _document_as_text(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """As :func:`_object_as_text`, for a document that may also be a list; null is None."""
    if isinstance(value, dict | list):
        return json.dumps(value)
    return None if value is None else handler(value)


#: The proposal body (an object) and credentials (a list, or {credentials: [...]}):
#: JSON documents, as text or as JSON values.
DocumentText = Annotated[
    str,
    WrapValidator(_object_as_text),
    WithJsonSchema({"type": ["string", "object"]}),
]
OptionalDocument = Annotated[
    str,
    WrapValidator(_document_as_text),
    WithJsonSchema({"type": ["string", "array", "object", "null"]}),
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


class AssessNotRun(BaseModel):
    """Nothing was assessed: invalid input (error, exit 2) or the deadline or a
    cancellation stopped it (inconclusive, exit 3)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    prover_version: str
    check: Literal["proposal"]
    result: Literal["error", "inconclusive"]
    exit_code: Literal[2, 3]
    inputs: AssessInputs
    reason_code: Literal["invalid_input", "solver_timeout", "cancelled"]
    reason: str = Field(description="The problem; for error, starting with the argument.")


class AssessProposalResult(RootModel[AssessedProposal | AssessNotRun]):
    """An assessment, an ``error`` object for invalid input, or an ``inconclusive`` one
    when the time limit ran out first."""

    model_config = ConfigDict(json_schema_extra={"type": "object"})


async def assess_proposal(
    current: Annotated[str, Field(description="The current effective policy (text).")],
    proposal: Annotated[
        DocumentText,
        Field(description="The proposal body (JSON or YAML text, or a JSON object)."),
    ],
    credentials: Annotated[
        OptionalDocument,
        Field(description="A list of {name, type, target_hosts} (text or JSON)."),
    ] = None,
    boundary: Annotated[
        OptionalText,
        Field(description="The environment's maximum policy (text)."),
    ] = None,
    accepted_risks: Annotated[
        OptionalText, Field(description="Optional accepted-risks document.")
    ] = None,
    registry: Annotated[
        OptionalText,
        Field(description="Binary descriptors added to the registry."),
    ] = None,
    mode: Annotated[
        Literal["agent_authored", "mechanistic"],
        Field(description="Who wrote the rule."),
    ] = "agent_authored",
    timeout_ms: TimeoutMs = DEFAULT_TIMEOUT_MS,
    environment: EnvironmentArgument = None,
) -> Annotated[CallToolResult, AssessProposalResult]:
    from prover.run import runner
    from server.environment_default import environment_for_call

    environment = environment_for_call(environment)
    from prover.errors import ProverError
    from prover.proposal import assess_proposal as assess
    from prover.proposal import render_text
    from prover.results.text import escape_control
    from prover.run.budget import Budget, BudgetExhausted

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
    from server.tools.schema import compact_schema, publish_output_schema, summarised

    server.add_tool(
        assess_proposal,
        name=NAME,
        title=TITLE,
        description=DESCRIPTION,
        annotations=ANNOTATIONS,
    )
    tool = server._tool_manager.get_tool(NAME)
    assert tool is not None and tool.fn_metadata.output_schema is not None
    schema = summarised(
        compact_schema(tool.fn_metadata.output_schema),
        {"BoundaryCheckResult": "check_boundary's result for merged_policy"},
    )
    publish_output_schema(server, NAME, schema)

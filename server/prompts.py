"""MCP prompts for the two main uses of the boundary check."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from prover.results.text import escape_control
from server.resources import RESULTS_URI


def _fenced(text: str) -> str:
    """``text`` in a code fence it cannot close: the fence is longer than any run of
    backticks in it (CommonMark closes a fence only with at least as many backticks)."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


_READING_THE_RESULT = f"""\
Only `within_boundary` passes. Treat `exceeds_boundary`, `unsupported`, `inconclusive` \
and `error` as failures:
- exceeds_boundary: the counterexample is one action the candidate allows and the \
boundary refuses; narrow or remove the rule that allows it and check again.
- unsupported: follow the reason (use exactly the boundary's paths, binaries and \
identities, or drop the construct) and check again.
- inconclusive: solver_timeout -> retry once with a larger timeout_ms; otherwise simplify.
- error: fix the policy text named in the reason.
The resource {RESULTS_URI} explains every reason_code."""


def vet_subagent_policy(
    subagent_policy: Annotated[
        str, Field(description="The policy you are about to give a subagent (YAML or JSON).")
    ],
    my_policy: Annotated[
        str, Field(description="Your own policy: the most the subagent may get (YAML or JSON).")
    ],
) -> str:
    return f"""\
I am about to start a subagent with the sandbox policy below. A subagent must never get \
more access than I have. Call the `check_boundary` tool with `candidate` = the subagent's \
policy and `boundary` = my policy, exactly as given.

{_READING_THE_RESULT}

If the result is not `within_boundary`, do not start the subagent with this policy. Call \
`explain_counterexample` with the same two texts: it lists every violation and, when \
`fix_verified` is true, a `fixed_candidate` that keeps as much of the subagent's access \
as the boundary allows. Check that fixed policy with `check_boundary` again, and show me \
the final result and its receipt. If the subagent later needs one more network rule, \
call `assess_proposal` first (`current` = the subagent's policy, `proposal` = the rule, \
`boundary` = my policy) and add the rule only if its `decision` is auto_approvable.

Subagent's policy (candidate):
{_fenced(subagent_policy)}

My policy (boundary):
{_fenced(my_policy)}"""


def self_check_policy_change(
    proposed_policy: Annotated[
        str,
        Field(description="The complete policy as it would be after your change (YAML/JSON)."),
    ],
    boundary_policy: Annotated[
        str,
        Field(description="The environment's maximum policy the change must stay within."),
    ],
    change_summary: Annotated[
        str, Field(description="What the change is for, in one sentence (optional).")
    ] = "",
) -> str:
    purpose = f"The change: {escape_control(change_summary)}\n\n" if change_summary.strip() else ""
    return f"""\
Before proposing this policy change, check it yourself. Call the `check_boundary` tool \
with `candidate` = the complete policy after the change and `boundary` = the maximum \
policy below.

{purpose}{_READING_THE_RESULT}

Propose the change only if the result is `within_boundary`, and include the result and \
the receipt's candidate_sha256 in the proposal. Otherwise narrow the change (fewer hosts, \
methods, paths or binaries) until it passes, or explain why it cannot.

Policy after the change (candidate):
{_fenced(proposed_policy)}

Maximum policy (boundary):
{_fenced(boundary_policy)}"""


def register_prompts(server: MCPServer) -> None:
    server.prompt(
        name="vet_subagent_policy",
        title="Vet a subagent's policy against my own",
        description="Check that a policy you are about to give a subagent grants nothing "
        "beyond your own policy, and fix it if it does.",
    )(vet_subagent_policy)
    server.prompt(
        name="self_check_policy_change",
        title="Self-check a policy change before proposing it",
        description="Check that a policy change stays within the environment's maximum "
        "policy before you propose it.",
    )(self_check_policy_change)
    _answer_bad_prompt_requests_with_invalid_params(server)


def _answer_bad_prompt_requests_with_invalid_params(server: MCPServer) -> None:
    """An unknown prompt or bad arguments is the client's mistake: JSON-RPC -32602 with
    the SDK's message, not an internal error (-32603, or code 0 on the handshake era)
    with a traceback in the log."""
    render = server.get_prompt

    async def get_prompt(name: str, arguments: Any = None, context: Any = None) -> Any:
        try:
            return await render(name, arguments, context)
        except MCPError:
            raise
        except ValueError as error:
            raise MCPError(code=INVALID_PARAMS, message=str(error)) from None

    server.get_prompt = get_prompt  # type: ignore[method-assign]

"""MCP prompts for the two main uses of the boundary check."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from server.resources import RESULTS_URI

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

If the result is not `within_boundary`, do not start the subagent with this policy: \
propose the smallest edit to the subagent's policy that fixes the problem, check the \
edited policy again, and show me the final result and its receipt.

Subagent's policy (candidate):
```
{subagent_policy}
```

My policy (boundary):
```
{my_policy}
```"""


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
    purpose = f"The change: {change_summary}\n\n" if change_summary.strip() else ""
    return f"""\
Before proposing this policy change, check it yourself. Call the `check_boundary` tool \
with `candidate` = the complete policy after the change and `boundary` = the maximum \
policy below.

{purpose}{_READING_THE_RESULT}

Propose the change only if the result is `within_boundary`, and include the result and \
the receipt's candidate_sha256 in the proposal. Otherwise narrow the change (fewer hosts, \
methods, paths or binaries) until it passes, or explain why it cannot.

Policy after the change (candidate):
```
{proposed_policy}
```

Maximum policy (boundary):
```
{boundary_policy}
```"""


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

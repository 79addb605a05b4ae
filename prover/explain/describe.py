"""Plain-word renderings of actions, endpoints and rules, shared by every stage."""

from __future__ import annotations

from prover.concrete.witness import network_action
from prover.policy.model import Endpoint, HttpRule, NetworkAction, QueryMatcher
from prover.results import (
    FilesystemCounterexample,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
)


def ports_text(ports: tuple[int, ...]) -> str:
    return ",".join(str(p) for p in ports) or "no port"


def query_text(query: tuple[QueryMatcher, ...]) -> str:
    return "&".join(f"{m.key}={'*' if m.value is None else m.value}" for m in query)


def http_rule_text(rule: HttpRule) -> str:
    text = f"{rule.method} {rule.path or '/**'}"
    if rule.query:
        text += f"?{query_text(rule.query)}"
    return text


def endpoint_text(endpoint: Endpoint) -> str:
    text = f"{endpoint.host}:{ports_text(endpoint.ports)}"
    if endpoint.layer == "l4":
        return text + " (L4)"
    if endpoint.path:
        text += f" path {endpoint.path}"
    if endpoint.access is not None:
        return text + f" (REST, access {endpoint.access})"
    return text + f" (REST, {len(endpoint.allow_rules)} allow rule(s))"


def action_query_text(action: NetworkAction) -> str:
    return "&".join(f"{k}={v}" for k, values in action.query for v in values)


def who_text(action: NetworkAction) -> str:
    if not action.binary_identity_required:
        return "Any process (when binary identity is not enforced)"
    if action.ancestor_binary and action.ancestor_binary != action.binary:
        return f"{action.binary} (started by {action.ancestor_binary})"
    return str(action.binary)


def network_action_text(action: NetworkAction) -> str:
    who = who_text(action)
    where = f"{action.host}:{action.port} at destination address {action.destination_ip}"
    if action.trusted_gateway:
        where += " (through the trusted gateway)"
    if action.protocol == "l4":
        return f"{who} can open a raw TCP (L4) connection to {where}."
    target = action.path or "/"
    query = action_query_text(action)
    if query:
        target += f"?{query}"
    return f"{who} can send the REST request {action.method} {target} to {where}."


def counterexample_text(cex: object) -> str:
    """The violating action in one plain sentence."""
    if isinstance(cex, NetworkCounterexample):
        return network_action_text(network_action(cex))
    if isinstance(cex, FilesystemCounterexample):
        verb = "write to" if cex.access == "write" else "read"
        if cex.path == "/" and cex.access == "write":
            # Only a sandbox without a Landlock ruleset writes / (read_write: [/] is
            # refused by validate_sandbox_policy): landlock.rs builds none for two
            # empty lists.
            return (
                "The sandbox can write anywhere Unix permissions allow: with both "
                "filesystem lists empty the runtime builds no Landlock ruleset, which the "
                "boundary does not allow."
            )
        return f"The sandbox can {verb} {cex.path}, which the boundary does not allow."
    if isinstance(cex, ProcessCounterexample):
        root = "" if cex.candidate == "root" else " (root)"
        return (
            f"The sandbox runs with {cex.field} '{cex.candidate}'{root}, where the boundary "
            f"requires '{cex.boundary}'."
        )
    if isinstance(cex, LandlockCounterexample):
        return (
            f"Landlock is '{cex.candidate}' (the sandbox starts even without Landlock), where "
            f"the boundary requires '{cex.boundary}'."
        )
    raise TypeError(f"unknown counterexample type {type(cex).__name__}")

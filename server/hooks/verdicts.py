"""Running the prover on the policies a command line applies, and saying what to fix.

Every action gets one answer: ``None`` when the prover found nothing to object to
(``check``: ``within_boundary``; ``policy update``: every added rule assessed with nothing
that needs review and the merged policy within the boundary), else the reason to deny the
command, written for the agent that will read it: the verdict, the counterexample or the
reason, and the next step. An unreadable file, a missing boundary or an internal failure
is a reason too: the hook fails closed.

``policy update`` changes a live sandbox whose policy the hook cannot fetch (``openshell
policy get`` needs the gateway). With the sandbox's current policy given (``--current``
or ``POLICY_PROVER_CURRENT``), each addition is merged into it as the gateway merges it
and assessed: findings, security notes, and the merged policy against the boundary.
Without it, the boundary is *not* used as the current policy for the verdict (a rule that
folds into one of the boundary's rules can lose access there that it would keep in the
sandbox); instead each addition is checked on its own against the boundary, which bounds
what the update adds whatever the sandbox's policy is, provided that policy is within the
boundary (as every policy this hook let through is). The findings are then assessed with
the boundary standing in for the current policy.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from prover.results.text import escape_control as _e
from server.hooks.openshell import Action, PolicyFile, PolicyUpdate, Unverifiable
from server.policy_files import PolicyFileError, read_policy_file

#: The next step for an update the hook cannot pass, for agents with the MCP server too.
_ASSESS_STEP = (
    "assess the change first (MCP tool assess_proposal, or `policy-prover assess`) for "
    "the findings and what would pass"
)


@dataclass(frozen=True)
class Inputs:
    """The hook's configuration: absolute paths (or ``None``) and the time limit."""

    boundary: str | None
    current: str | None
    credentials: str | None
    timeout_ms: int


class _Denied(Exception):
    """A reason to deny, raised from deep inside a check."""


def objections(found: list[Action], inputs: Inputs) -> list[str]:
    """The reasons to deny, one per action that is not proven safe (empty: no objection)."""
    from prover.run.budget import Budget  # imported only once a command applies a policy

    budget = Budget(inputs.timeout_ms)
    reasons: list[str] = []
    seen: set[tuple[str, str]] = set()
    for action in found:
        key = (type(action).__name__, repr(action))  # the same file, changed between: both
        if key in seen:
            continue
        seen.add(key)
        try:
            reason = _objection(action, inputs, budget)
        except _Denied as denied:
            reason = str(denied)
        except Exception as exc:  # an internal failure must deny, never pass
            reason = (
                f"policy-prover hook: internal error while checking {_form(action)}: "
                f"{type(exc).__name__}: {_e(str(exc))}. The command was blocked because it "
                "could not be checked."
            )
        if reason is not None:
            reasons.append(reason)
    return reasons


def _form(action: Action) -> str:
    return f"`{_e(action.form)}`"


def unverifiable_reason(action: Unverifiable) -> str:
    """Why the hook asks (or denies): it cannot tell what the command runs."""
    return f"policy-prover hook: cannot check {_form(action)}: {_e(action.reason)}."


def _objection(action: Action, inputs: Inputs, budget: Any) -> str | None:
    if isinstance(action, Unverifiable):
        return unverifiable_reason(action)
    boundary = _boundary(inputs)
    if isinstance(action, PolicyFile):
        return _check_file(action, boundary, inputs, budget)
    return _assess_update(action, boundary, inputs, budget)


def _boundary(inputs: Inputs) -> str:
    if inputs.boundary is None:
        raise _Denied(
            "policy-prover hook: no boundary policy is configured, so the policy this command "
            "applies cannot be checked. Set POLICY_PROVER_BOUNDARY or pass --boundary FILE to "
            "`policy-prover hook` in the hook configuration."
        )
    return _read(inputs.boundary, "boundary policy")


def _read(path: str, what: str) -> str:
    try:
        return read_policy_file(path)
    except PolicyFileError as exc:
        raise _Denied(
            f"policy-prover hook: cannot read the {what} {_e(path)}: {_e(str(exc))}."
        ) from None


def _check_file(action: PolicyFile, boundary: str, inputs: Inputs, budget: Any) -> str | None:
    from prover import api
    from prover.results import Verdict
    from prover.results.report import boundary_text

    if action.path is None:
        raise _Denied(
            f"policy-prover hook: cannot tell which file `{_e(action.given)}` names in "
            f"{_form(action)} (an unset variable, or a directory the command line changes in a "
            "way the hook cannot follow). Use a literal path, absolute or relative to the "
            "working directory."
        )
    if action.writer:
        raise _Denied(
            f"policy-prover hook: this command line runs `{_e(action.writer)}` before it "
            f"applies {_e(action.path or action.given)} with {_form(action)}, and "
            f"`{_e(action.writer)}` may change files; the hook can only check the file as it "
            f"is before the command runs. Run `{_e(action.writer)}` first, then apply the "
            "policy in a separate command."
        )
    if action.written_by_line:
        raise _Denied(
            f"policy-prover hook: this command line writes {_e(action.path)} and then applies it "
            f"with {_form(action)}; the hook can only check the file as it is before the "
            "command runs. Write the policy file first, then apply it in a separate command."
        )
    candidate = _read(action.path, "policy file")
    check = api.check_boundary(candidate, boundary, budget=budget)
    outcome = check.outcome
    if outcome.verdict is Verdict.WITHIN:
        return None
    quoted = _e(
        shlex.join(["policy-prover", "explain", action.path, "--boundary", inputs.boundary or ""])
    )
    path = _e(action.path)
    if outcome.verdict is Verdict.ERROR:
        step = f"Fix the policy file {path}, then run the command again."
    elif outcome.verdict is Verdict.EXCEEDS:
        step = (
            f"Run `{quoted}`: it lists every violation and a fix the prover verified. Apply the "
            f"fix to {path}, check it again (`policy-prover check`), then run the "
            "command again."
        )
    else:
        step = (
            f"Run `{quoted}`: it explains the reason and how to rewrite the policy so that "
            "the prover can decide. Only within_boundary passes."
        )
    return (
        f"policy-prover hook: blocked {_form(action)}: the policy {path} is not proven "
        f"within the boundary {_e(inputs.boundary or '')}.\n{boundary_text(outcome)}"
        f"Next: {step}"
    )


def _assess_update(action: PolicyUpdate, boundary: str, inputs: Inputs, budget: Any) -> str | None:
    credentials = _read(inputs.credentials, "credentials") if inputs.credentials else None
    if inputs.current is not None:
        current = _read(inputs.current, "current policy")
        return _assess_against_current(action, current, boundary, credentials, inputs, budget)
    return _assess_without_current(action, boundary, credentials, inputs, budget)


def _assess(current: str, proposal: dict[str, Any], label: str, **options: Any) -> Any:
    from prover.errors import PolicyLoadError, ProposalError
    from prover.proposal import assess_proposal

    text = json.dumps(proposal, separators=(",", ":"))
    try:
        return assess_proposal(current, text, **options)
    except (ProposalError, PolicyLoadError) as exc:
        raise _Denied(
            f"policy-prover hook: blocked `openshell policy update` ({_e(label)}): the change "
            f"cannot be assessed: {_e(str(exc))}"
        ) from None


def _assess_against_current(
    action: PolicyUpdate,
    current: str,
    boundary: str,
    credentials: str | None,
    inputs: Inputs,
    budget: Any,
) -> str | None:
    """Each addition merged into the current policy as the gateway merges it, in order."""
    from prover.proposal import exit_code

    steps: list[tuple[dict[str, Any] | None, str, Any]] = [
        (proposal, f"--add-endpoint for rule '{proposal['rule_name']}'", None)
        for proposal in action.proposals
    ]
    steps += [(None, f"--add-allow for {g[0]}:{g[1]}", g) for g in action.allow_groups]
    for proposal, label, group in steps:
        if proposal is None:
            host, port, rules = group
            proposal = _allow_proposal(current, host, port, rules, inputs.current or "")
        assessment = _assess(
            current, proposal, label, credentials=credentials, boundary=boundary, budget=budget
        )
        if exit_code(assessment) != 0:
            return _update_reason(assessment, label, proposal, inputs.current or "", inputs)
        assert assessment.merged_policy is not None
        current = assessment.merged_policy
    return None


def _assess_without_current(
    action: PolicyUpdate, boundary: str, credentials: str | None, inputs: Inputs, budget: Any
) -> str | None:
    """Without the sandbox's policy: each addition on its own against the boundary.

    Folding a rule into the sandbox's unknown policy can only give it what it declares
    (the gateway refuses a merge that would hand existing binaries undeclared access, or
    new binaries undeclared endpoints), so the policy after the update allows at most the
    current policy plus each declared rule standing alone. With the current policy within
    the boundary (what this hook lets through), the update stays within the boundary if
    each standalone rule does. An ``--add-allow`` rule reaches the binaries of whichever
    rule holds ``host:port``: every binary the boundary (or this command) allows there.
    The findings are assessed with the boundary standing in for the current policy.
    """
    from prover.proposal import exit_code
    from prover.proposal.assess import authored_data

    base = authored_data(boundary, "boundary policy")
    stand_in = f"{inputs.boundary} (the boundary, standing in for the unknown current policy)"
    for proposal in action.proposals:
        label = f"--add-endpoint for rule '{proposal['rule_name']}'"
        assessment = _assess(boundary, proposal, label, credentials=credentials, budget=budget)
        if exit_code(assessment) != 0:
            return _update_reason(assessment, label, proposal, stand_in, inputs)
        reason = _standalone(base, proposal["rule"], boundary, label, inputs, budget)
        if reason is not None:
            return reason
    for host, port, rules in action.allow_groups:
        label = f"--add-allow for {host}:{port}"
        for rule in _allow_reach(base, action.proposals, host, port, rules):
            reason = _standalone(base, rule, boundary, label, inputs, budget, alone=True)
            if reason is not None:
                return reason
    return None


def _standalone(
    base: dict[str, Any],
    rule: dict[str, Any],
    boundary: str,
    label: str,
    inputs: Inputs,
    budget: Any,
    *,
    alone: bool = False,
) -> str | None:
    """``None`` when the boundary plus ``rule`` under a fresh name is within the boundary.

    ``alone``: the boundary's own network rules are left out. A new endpoint is checked
    next to them, so that an overlap with one (an L4 and a REST endpoint at one host and
    port, which the runtime resolves to a single contract) is caught; rules appended to an
    existing endpoint create no overlap that was not there before, so they are checked on
    their own.
    """
    import copy

    from prover import api
    from prover.results import Verdict
    from prover.results.report import boundary_text

    candidate = copy.deepcopy(base)
    rules = {} if alone else candidate.get("network_policies") or {}
    key = "policy_prover_hook_rule"
    while key in rules:
        key += "_"
    rules[key] = {**rule, "name": key}
    candidate["network_policies"] = rules
    outcome = api.check_boundary(json.dumps(candidate), boundary, budget=budget).outcome
    if outcome.verdict is Verdict.WITHIN:
        return None
    shown = json.dumps({k: v for k, v in rule.items() if k != "name"}, separators=(",", ":"))
    return (
        f"policy-prover hook: blocked `openshell policy update` ({_e(label)}): the access it "
        f"adds is not proven within the boundary {_e(inputs.boundary or '')}. The sandbox's "
        "current policy is unknown to the hook (no --current), so the addition was checked on its "
        f"own: {shown}\n{boundary_text(outcome)}"
        f'Next: {_ASSESS_STEP} (save this rule as a proposal {{"rule_name": ..., "rule": '
        "...}); or narrow the endpoint (host, port, access or method/path rules, --binary) to "
        "what the boundary allows, then run the command again. Give the hook the sandbox's "
        "current policy (--current FILE or POLICY_PROVER_CURRENT) for an exact merge."
    )


def _allow_reach(
    base: dict[str, Any],
    proposals: tuple[dict[str, Any], ...],
    host: str,
    port: int,
    rules: tuple[dict[str, Any], ...],
) -> list[dict[str, Any]]:
    """A standalone rule that over-approximates what ``--add-allow`` adds at ``host:port``.

    The rules go to the endpoint ``host:port`` of some rule of the current policy, so they
    reach that rule's binaries: at most every binary that the boundary (or this command)
    lets reach ``host:port``. The endpoint is REST: the gateway refuses method/path rules
    elsewhere, and a WebSocket endpoint (not modelled, so never proven) cannot be in a
    current policy that is within the boundary.
    """
    holders = [*(base.get("network_policies") or {}).values()]
    holders += [proposal["rule"] for proposal in proposals]
    binaries: list[dict[str, Any]] = []
    any_binary = False
    found = False
    for holder in holders:
        if not any(
            str(endpoint.get("host", "")).lower() == host.lower()
            and port in (endpoint.get("ports") or [endpoint.get("port")])
            for endpoint in holder.get("endpoints") or []
        ):
            continue
        found = True
        if not holder.get("binaries"):
            any_binary = True
        for binary in holder.get("binaries") or []:
            if binary not in binaries:
                binaries.append(binary)
    if not found:
        raise _Denied(
            "policy-prover hook: blocked `openshell policy update --add-allow` for "
            f"{_e(host)}:{port}: neither the boundary nor this command has an endpoint "
            f"{_e(host)}:{port}, so the hook cannot tell which binaries the new rules would "
            "reach. Give the hook the sandbox's current policy (--current FILE or "
            "POLICY_PROVER_CURRENT)."
        )
    endpoint = {
        "host": host,
        "port": port,
        "protocol": "rest",
        "enforcement": "enforce",
        "rules": [dict(rule) for rule in rules],
    }
    rule: dict[str, Any] = {"endpoints": [endpoint]}
    if not any_binary:
        rule["binaries"] = binaries
    return [rule]


def _allow_proposal(
    current: str, host: str, port: int, rules: tuple[dict[str, Any], ...], current_name: str
) -> dict[str, Any]:
    """``--add-allow`` as the ``addRule`` that has the same effect on the current policy.

    The gateway appends the rules to the endpoint ``host:port`` of the first (by name)
    non-provider rule that has one, after expanding its ``access`` preset; an ``addRule``
    to that rule's name, with that endpoint's host, ports and path and the rule's own
    binaries, folds into the same endpoint the same way.
    """
    from prover.proposal.assess import authored_data
    from prover.proposal.endpoint import is_provider_rule

    policy = authored_data(current, "current policy")
    rules_by_name = policy.get("network_policies") or {}
    for name in sorted(rules_by_name):
        if is_provider_rule(name):
            continue
        for endpoint in rules_by_name[name].get("endpoints") or []:
            endpoint_ports = endpoint.get("ports") or [endpoint.get("port")]
            if str(endpoint.get("host", "")).lower() != host.lower() or port not in endpoint_ports:
                continue
            protocol = endpoint.get("protocol", "")
            if protocol not in ("rest", "websocket"):
                raise _Denied(
                    f"policy-prover hook: blocked `openshell policy update --add-allow` for "
                    f"{_e(host)}:{port}: the endpoint in rule '{_e(name)}' of "
                    f"{_e(current_name)} has protocol '{protocol or 'none (L4)'}'; method/path "
                    "rules need rest or websocket, and the gateway would refuse the update."
                )
            incoming: dict[str, Any] = {"host": endpoint["host"], "protocol": protocol}
            incoming["ports" if endpoint.get("ports") else "port"] = endpoint.get(
                "ports"
            ) or endpoint.get("port")
            if endpoint.get("path"):
                incoming["path"] = endpoint["path"]
            incoming["rules"] = [dict(rule) for rule in rules]
            rule: dict[str, Any] = {"name": name, "endpoints": [incoming]}
            if rules_by_name[name].get("binaries"):
                rule["binaries"] = rules_by_name[name]["binaries"]
            return {"rule_name": name, "rule": rule}
    raise _Denied(
        f"policy-prover hook: blocked `openshell policy update --add-allow` for {_e(host)}:{port}: "
        f"{_e(current_name)} has no endpoint {_e(host)}:{port} to add rules to. If the sandbox has "
        "one, give the hook its current policy (--current FILE or POLICY_PROVER_CURRENT)."
    )


def _update_reason(
    assessment: Any, label: str, proposal: dict[str, Any], current_name: str, inputs: Inputs
) -> str:
    from prover.proposal.boundary import boundary_lines

    a = assessment
    lines = [
        f"policy-prover hook: blocked `openshell policy update` ({_e(label)}) against current "
        f"policy {_e(current_name)} and boundary {_e(inputs.boundary or '')}."
    ]
    if a.application_error is not None:
        lines.append(f"The gateway would refuse it: {_e(str(a.application_error))}")
    else:
        lines.append(_e(str(a.validation_result)))
        for finding in a.findings:
            if not finding.accepted:
                lines.append(_e(f"finding [{finding.category.value}]: {finding.title}"))
        lines += [_e(f"security note: {note}") for note in a.security_notes]
        lines += [_e(f"approval blocker: {blocker}") for blocker in a.approval_blockers]
        lines += [_e(line.strip()) for line in boundary_lines(a) if line.strip()]
    current_arg = inputs.current or inputs.boundary or ""
    command = _e(
        shlex.join(
            ["policy-prover", "assess", "--current", current_arg, "--proposal", "PROPOSAL.json"]
            + (["--boundary", inputs.boundary] if inputs.boundary else [])
        )
    )
    lines.append(f"proposal: {json.dumps(proposal, separators=(',', ':'))}")
    lines.append(
        "Next: save the proposal above as PROPOSAL.json and assess it (MCP tool "
        f"assess_proposal with it as the proposal, or `{command}`) for the findings and "
        "what would pass. Or narrow the endpoint (host, port, "
        "access or method/path rules, --binary) to what the boundary allows and the task "
        "needs, then run the command again."
    )
    return "\n".join(lines)

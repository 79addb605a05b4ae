"""Running the prover on the policies a command line applies, and saying what to fix.

Every action gets one answer: ``None`` when the prover found nothing to object to
(``check``: ``within_boundary``; ``policy update``: every added rule assessed with nothing
that needs review and the merged policy within the boundary), else the reason to deny the
command, written for the agent that will read it: the verdict, the counterexample or the
reason, and the next step. An unreadable file, a missing boundary or an internal failure
is a reason too: the hook fails closed.

``policy update`` changes a live sandbox whose policy the hook cannot fetch (``openshell
policy get`` needs the gateway). The current policy is the file given with ``--current``
(or ``POLICY_PROVER_CURRENT``); without one the boundary stands in for it, which still
decides the boundary verdict of the merged policy exactly when the sandbox's policy is
within the boundary (a policy this hook let through), but reports as new only the risks
the boundary itself does not already carry.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from server.hooks.openshell import Action, PolicyFile, PolicyUpdate, Unverifiable
from server.policy_files import PolicyFileError, read_policy_file


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
    from prover.budget import Budget  # imported only once a command applies a policy

    budget = Budget(inputs.timeout_ms)
    reasons: list[str] = []
    seen: set[tuple[str, str | None]] = set()
    for action in found:
        key = (type(action).__name__, getattr(action, "path", None) or repr(action))
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
                f"{type(exc).__name__}: {exc}. The command was blocked because it could "
                "not be checked."
            )
        if reason is not None:
            reasons.append(reason)
    return reasons


def _form(action: Action) -> str:
    return f"`{action.form}`"


def _objection(action: Action, inputs: Inputs, budget: Any) -> str | None:
    if isinstance(action, Unverifiable):
        return f"policy-prover hook: cannot check {_form(action)}: {action.reason}."
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
        raise _Denied(f"policy-prover hook: cannot read the {what} {path}: {exc}.") from None


def _check_file(action: PolicyFile, boundary: str, inputs: Inputs, budget: Any) -> str | None:
    from prover import api
    from prover.report import boundary_text
    from prover.results import Verdict

    if action.path is None:
        raise _Denied(
            f"policy-prover hook: cannot tell which file `{action.given}` names in "
            f"{_form(action)} (an unset variable, or a directory the command line changes in a "
            "way the hook cannot follow). Use a literal path, absolute or relative to the "
            "working directory."
        )
    if action.written_by_line:
        raise _Denied(
            f"policy-prover hook: this command line writes {action.path} and then applies it "
            f"with {_form(action)}; the hook can only check the file as it is before the "
            "command runs. Write the policy file first, then apply it in a separate command."
        )
    candidate = _read(action.path, "policy file")
    check = api.check_boundary(candidate, boundary, budget=budget)
    outcome = check.outcome
    if outcome.verdict is Verdict.WITHIN:
        return None
    quoted = shlex.join(
        ["policy-prover", "explain", action.path, "--boundary", inputs.boundary or ""]
    )
    if outcome.verdict is Verdict.ERROR:
        step = f"Fix the policy file {action.path}, then run the command again."
    elif outcome.verdict is Verdict.EXCEEDS:
        step = (
            f"Run `{quoted}`: it lists every violation and a fix the prover verified. Apply the "
            f"fix to {action.path}, check it again (`policy-prover check`), then run the "
            "command again."
        )
    else:
        step = (
            f"Run `{quoted}`: it explains the reason and how to rewrite the policy so that "
            "the prover can decide. Only within_boundary passes."
        )
    return (
        f"policy-prover hook: blocked {_form(action)}: the policy {action.path} is not proven "
        f"within the boundary {inputs.boundary}.\n{boundary_text(outcome)}Next: {step}"
    )


def _assess_update(action: PolicyUpdate, boundary: str, inputs: Inputs, budget: Any) -> str | None:
    from prover.errors import PolicyLoadError, ProposalError
    from prover.proposal import assess_proposal, exit_code

    if inputs.current is not None:
        current, current_name = _read(inputs.current, "current policy"), inputs.current
    else:
        current, current_name = boundary, f"{inputs.boundary} (the boundary, standing in)"
    credentials = _read(inputs.credentials, "credentials") if inputs.credentials else None
    steps = [
        (proposal, f"--add-endpoint for rule '{proposal['rule_name']}'")
        for proposal in action.proposals
    ]
    pending_allow = list(action.allow_groups)
    while steps or pending_allow:
        if steps:
            proposal, label = steps.pop(0)
        else:
            host, port, rules = pending_allow.pop(0)
            proposal = _allow_proposal(current, host, port, rules, current_name)
            label = f"--add-allow for {host}:{port}"
        text = json.dumps(proposal, separators=(",", ":"))
        try:
            assessment = assess_proposal(
                current, text, credentials=credentials, boundary=boundary, budget=budget
            )
        except (ProposalError, PolicyLoadError) as exc:
            raise _Denied(
                f"policy-prover hook: blocked `openshell policy update` ({label}): the change "
                f"cannot be assessed: {exc}"
            ) from None
        if exit_code(assessment) != 0:
            return _update_reason(assessment, label, text, current_name, inputs)
        assert assessment.merged_policy is not None
        current = assessment.merged_policy
    return None


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
                    f"{host}:{port}: the endpoint in rule '{name}' of {current_name} has "
                    f"protocol '{protocol or 'none (L4)'}'; method/path rules need rest or "
                    "websocket, and the gateway would refuse the update."
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
        f"policy-prover hook: blocked `openshell policy update --add-allow` for {host}:{port}: "
        f"{current_name} has no endpoint {host}:{port} to add rules to. If the sandbox has "
        "one, give the hook its current policy (--current FILE or POLICY_PROVER_CURRENT)."
    )


def _update_reason(
    assessment: Any, label: str, proposal: str, current_name: str, inputs: Inputs
) -> str:
    from prover.proposal.boundary import boundary_lines

    a = assessment
    lines = [
        f"policy-prover hook: blocked `openshell policy update` ({label}) against current "
        f"policy {current_name} and boundary {inputs.boundary}."
    ]
    if a.application_error is not None:
        lines.append(f"The gateway would refuse it: {a.application_error}")
    else:
        lines.append(a.validation_result)
        for finding in a.findings:
            if not finding.accepted:
                lines.append(f"finding [{finding.category.value}]: {finding.title}")
        lines += [f"security note: {note}" for note in a.security_notes]
        lines += [f"approval blocker: {blocker}" for blocker in a.approval_blockers]
        lines += [line.strip() for line in boundary_lines(a) if line.strip()]
    current_arg = inputs.current or inputs.boundary or ""
    command = shlex.join(
        ["policy-prover", "assess", "--current", current_arg, "--proposal", "PROPOSAL.json"]
        + (["--boundary", inputs.boundary] if inputs.boundary else [])
    )
    lines.append(f"proposal: {proposal}")
    lines.append(
        "Next: narrow the endpoint (host, port, access or method/path rules, --binary) to what "
        "the boundary allows and the task needs, then run the command again; for the full "
        f"report save the proposal above as PROPOSAL.json and run `{command}`."
    )
    return "\n".join(lines)

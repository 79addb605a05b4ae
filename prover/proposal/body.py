"""Reading the proposal: the agent API body or a bare ``{rule_name, rule}``.

Two spellings are accepted (spec §1):

* the in-sandbox agent API body ``{"intent_summary": ..., "operations": [{"addRule":
  {"ruleName": ..., "rule": {...}}}]}`` — the ``policy.local`` client checks apply (at
  least one operation, only ``addRule``, a rule name from ``ruleName`` or ``rule.name``,
  at least one endpoint, each with a host and a port, no ``?`` in allow paths) and only
  the fields ``policy.local`` forwards survive (host, port(s), protocol, tls,
  enforcement, access, ``rules[].allow.{method,path,command}``,
  ``deny_rules[].{method,path,command}``, allowed_ips, allow_encoded_slash); every other
  field is dropped with a warning, as the reference drops it silently. One assessment
  covers one rule, so exactly one operation is accepted;
* the gateway chunk ``{rule_name, rule}`` (``rule`` may be a mapping or YAML/JSON text of
  one) — the gateway's checks apply: ``rule_name`` non-empty and not ``_provider_``-
  prefixed. Nothing is dropped.

In both spellings the rule is first validated with the closed ``NetworkRuleSection``
schema, so a misspelt field is an error naming it. Every failure is a
:class:`~prover.errors.ProposalError` (invalid input).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from prover.errors import PolicyLoadError, ProposalError
from prover.policy.messages import describe_errors
from prover.policy.paths import render_path
from prover.policy.reader import read_policy_data
from prover.policy.schema import NetworkRuleSection
from prover.proposal.endpoint import PROVIDER_PREFIX, Data, clean, items, ports, text

_ENDPOINT_FIELDS = (
    "host",
    "port",
    "ports",
    "protocol",
    "tls",
    "enforcement",
    "access",
    "rules",
    "deny_rules",
    "allowed_ips",
    "allow_encoded_slash",
)
_MATCHER_FIELDS = ("method", "path", "command")


@dataclass
class ProposedRule:
    """The rule a proposal adds, as authored data, and how it was read."""

    rule_name: str
    rule: Data
    intent_summary: str = ""
    source: str = "chunk"
    warnings: list[str] = field(default_factory=list)


def _read(
    data: str | bytes, what: str, checkpoint: Callable[[], None] | None = None
) -> dict[str, object]:
    try:
        return read_policy_data(data, checkpoint)
    except PolicyLoadError as error:
        message = str(error).replace("policy file", "document").replace("policy must", "it must")
        raise ProposalError(f"{what}: {message}") from None


def _validated_rule(raw: object, location: tuple[str | int, ...]) -> Data:
    """The rule checked against the closed rule schema, as clean authored data."""
    if not isinstance(raw, dict):
        raise ProposalError(
            f"proposal field '{render_path(location)}' must be a mapping (a network rule)"
        )
    try:
        model = NetworkRuleSection.model_validate(_without_empty_rule_lists(raw))
    except ValidationError as error:
        details = [
            {**detail, "loc": (*location, *detail["loc"])}
            for detail in error.errors(include_url=False)
        ]
        message, _ = describe_errors(details)  # type: ignore[arg-type]
        raise ProposalError(f"proposal: {message}") from None
    return clean(model.model_dump(mode="json", exclude_none=True, exclude_unset=True))


def _without_empty_rule_lists(raw: dict[Any, Any]) -> dict[Any, Any]:
    """The rule with explicit empty ``rules``/``deny_rules`` lists removed.

    A proposal travels as protobuf, which cannot tell an empty list from an absent one
    (policy-schema §8 item 10), so the gateway reads ``rules: []`` as no ``rules``; the
    authored-policy schema refuses the explicit empty list, so drop it first.
    """
    endpoints = raw.get("endpoints")
    if not isinstance(endpoints, list):
        return raw
    cleaned = [
        {k: v for k, v in ep.items() if not (k in ("rules", "deny_rules") and v == [])}
        if isinstance(ep, dict)
        else ep
        for ep in endpoints
    ]
    return {**raw, "endpoints": cleaned}


def _expect_keys(mapping: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in mapping:
        if key not in allowed:
            prefix = f"{where}." if where else ""
            raise ProposalError(f"proposal: unknown field '{prefix}{key}'")


def _parse_chunk(document: dict[str, Any]) -> ProposedRule:
    _expect_keys(document, {"rule_name", "rule", "intent_summary"}, "")
    rule_name = document.get("rule_name")
    if not isinstance(rule_name, str):
        raise ProposalError(
            "proposal: field 'rule_name' must be a string (chunk missing rule_name)"
        )
    if not rule_name.strip():
        raise ProposalError("proposal: chunk missing rule_name")
    if rule_name.startswith(PROVIDER_PREFIX):
        raise ProposalError(
            f"proposal: chunk '{rule_name}' uses reserved '{PROVIDER_PREFIX}' rule-name prefix"
        )
    if "rule" not in document or document["rule"] is None:
        raise ProposalError(f"proposal: chunk '{rule_name}' is missing proposed_rule ('rule')")
    raw_rule = document["rule"]
    if isinstance(raw_rule, str):
        raw_rule = _read(raw_rule, "proposal field 'rule'")
    summary = document.get("intent_summary", "")
    if not isinstance(summary, str):
        raise ProposalError("proposal: field 'intent_summary' must be a string")
    rule = _validated_rule(raw_rule, ("rule",))
    return ProposedRule(rule_name=rule_name, rule=rule, intent_summary=summary, source="chunk")


def _project_endpoint(endpoint: Data, where: str, warnings: list[str]) -> Data:
    """Keep only what ``policy.local`` forwards; report what it drops."""
    kept: Data = {}
    for key, value in endpoint.items():
        if key not in _ENDPOINT_FIELDS:
            warnings.append(f"{where}.{key} is not forwarded by the agent API and was dropped")
            continue
        if key in ("rules", "deny_rules"):
            projected = []
            for index, entry in enumerate(value):
                matcher = entry.get("allow", {}) if key == "rules" else entry
                inner = {k: v for k, v in matcher.items() if k in _MATCHER_FIELDS}
                for dropped in sorted(set(matcher) - set(_MATCHER_FIELDS)):
                    label = f"{where}.{key}[{index}]" + (".allow" if key == "rules" else "")
                    warnings.append(
                        f"{label}.{dropped} is not forwarded by the agent API and was dropped"
                    )
                projected.append({"allow": inner} if key == "rules" else inner)
            kept[key] = projected
        else:
            kept[key] = value
    return kept


def _parse_agent_body(document: dict[str, Any]) -> ProposedRule:
    _expect_keys(document, {"intent_summary", "operations"}, "")
    operations = document.get("operations")
    if not isinstance(operations, list) or not operations:
        raise ProposalError("proposal: proposal requires at least one operation")
    if len(operations) > 1:
        raise ProposalError(
            f"proposal: {len(operations)} operations given; assess one addRule operation at a time"
        )
    operation = operations[0]
    if not isinstance(operation, dict) or "addRule" not in operation:
        raise ProposalError(
            "proposal: this MVP accepts `addRule` operations; "
            "submit a full narrow NetworkPolicyRule"
        )
    _expect_keys(operation, {"addRule"}, "operations[0]")
    add_rule = operation["addRule"]
    if not isinstance(add_rule, dict):
        raise ProposalError("proposal: field 'operations[0].addRule' must be a mapping")
    _expect_keys(add_rule, {"ruleName", "rule"}, "operations[0].addRule")
    if "rule" not in add_rule:
        raise ProposalError("proposal: missing required field 'operations[0].addRule.rule'")
    rule = _validated_rule(add_rule["rule"], ("operations", 0, "addRule", "rule"))
    requested = add_rule.get("ruleName")
    if requested is not None and not isinstance(requested, str):
        raise ProposalError("proposal: field 'operations[0].addRule.ruleName' must be a string")
    rule_name = (requested or "").strip() or text(rule, "name")
    if not rule_name.strip():
        raise ProposalError("proposal: addRule.ruleName or rule.name is required")
    endpoints = items(rule, "endpoints")
    if not endpoints:
        raise ProposalError("proposal: rule.endpoints must contain at least one endpoint")
    warnings: list[str] = []
    projected = []
    for index, endpoint in enumerate(endpoints):
        if not text(endpoint, "host").strip():
            raise ProposalError("proposal: endpoint.host is required")
        if not ports(endpoint):
            raise ProposalError("proposal: endpoint.port or endpoint.ports is required")
        if any("?" in text(allow.get("allow", {}), "path") for allow in items(endpoint, "rules")):
            raise ProposalError("proposal: L7 allow paths must not include query strings")
        projected.append(_project_endpoint(endpoint, f"rule.endpoints[{index}]", warnings))
    rule["endpoints"] = projected
    if not text(rule, "name").strip():
        rule["name"] = rule_name
    if rule_name.startswith(PROVIDER_PREFIX):
        raise ProposalError(
            f"proposal: chunk '{rule_name}' uses reserved '{PROVIDER_PREFIX}' rule-name prefix"
        )
    summary = document.get("intent_summary") or ""
    if not isinstance(summary, str):
        raise ProposalError("proposal: field 'intent_summary' must be a string")
    return ProposedRule(
        rule_name=rule_name,
        rule=rule,
        intent_summary=summary,
        source="agent_api",
        warnings=warnings,
    )


def parse_proposal(data: str | bytes, checkpoint: Callable[[], None] | None = None) -> ProposedRule:
    """Read either proposal spelling; see the module docstring for the checks applied."""
    document = _read(data, "proposal", checkpoint)
    if "operations" in document:
        return _parse_agent_body(document)
    if "rule" in document or "rule_name" in document:
        return _parse_chunk(document)
    raise ProposalError(
        "proposal: expected an agent API body {intent_summary, operations: [{addRule: ...}]} "
        "or a bare {rule_name, rule}"
    )

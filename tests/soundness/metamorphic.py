"""Metamorphic relations: verdicts that must follow from other verdicts, no oracle needed.

* a policy is within a reordered, renamed copy of itself (``unsupported`` or
  ``inconclusive`` only when its shape is outside the model), never exceeds;
* removing a deny-free rule, endpoint, binary or port, an allow rule or a filesystem
  path from a ``within`` candidate keeps it within (or unsupported/inconclusive), never
  exceeds: each of these can only take authority away (a deny rule cannot be taken with
  them, because dropping a deny widens the policy);
* adding a rule for a host the boundary cannot match gives ``exceeds`` (or
  unsupported/inconclusive), never within.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

from prover.api import check_boundary
from prover.results import CheckOutcome, ReasonCode, Verdict
from tests.soundness import vocabulary as v
from tests.soundness.documents import choice, endpoints_of, has_denies, rules_of
from tests.soundness.generator import Document, render
from tests.soundness.oracle import Finding

Check = Callable[[str, str], CheckOutcome]


def default_check(timeout_ms: int) -> Check:
    return lambda cand, bound: check_boundary(cand, bound, timeout_ms=timeout_ms).outcome


def permuted(doc: Document, rng: random.Random) -> Document:
    """The same policy with rules, endpoints, binaries, ports, allow and deny rules and
    filesystem paths reordered and the rules renamed."""
    result = copy.deepcopy(doc)
    items = list(rules_of(result).items())
    rng.shuffle(items)
    result["network_policies"] = {f"p{i}_{key}": r for i, (key, r) in enumerate(items)}
    for r in result["network_policies"].values():
        for name in ("endpoints", "binaries"):
            rng.shuffle(r.get(name, []))
        for ep in r.get("endpoints", []):
            for name in ("ports", "rules", "deny_rules"):
                rng.shuffle(ep.get(name, []))
    fs = result.get("filesystem_policy")
    if isinstance(fs, dict):
        for name in ("read_only", "read_write"):
            rng.shuffle(fs.get(name, []))
    return result


def _acceptable_self(outcome: CheckOutcome) -> bool:
    if outcome.verdict is Verdict.WITHIN:
        return True
    if outcome.verdict is Verdict.UNSUPPORTED:
        # Spec §9.7: the exact-deny symlink rule also fires on a (reordered) copy.
        return outcome.reason_code in (
            ReasonCode.UNSUPPORTED_POLICY_SHAPE,
            ReasonCode.UNRESOLVED_BINARY_PATH,
        )
    return outcome.verdict is Verdict.INCONCLUSIVE and outcome.reason_code in (
        ReasonCode.SOLVER_TIMEOUT,
        ReasonCode.RESOURCE_LIMIT,
    )


def self_containment(
    doc: Document, text: str, rng: random.Random, check: Check
) -> tuple[CheckOutcome, list[Finding]]:
    copy_text = render(permuted(doc, rng))
    outcome = check(copy_text, text)
    if outcome.verdict is Verdict.EXCEEDS:
        return outcome, [Finding("self_exceeds", str(outcome.counterexample), copy_text, text)]
    if not _acceptable_self(outcome):
        detail = f"{outcome.verdict.value}: {outcome.reason}"
        return outcome, [Finding("self_not_within", detail, copy_text, text)]
    return outcome, []


def remove_one(doc: Document, rng: random.Random) -> str | None:
    """Take away one piece of authority that cannot carry a deny rule nor decide how the
    runtime handles a connection: removing an inspected endpoint (or the rule or binary
    that brings it) hands an L4 endpoint beside it raw access, which is wider."""
    rules = rules_of(doc)
    plain = {k: r for k, r in rules.items() if not has_denies(r) and not _configures(r)}
    plain_endpoints = [
        (r, ep)
        for r in rules.values()
        for ep in r.get("endpoints", [])
        if not ep.get("deny_rules") and not _configured(ep)
    ]
    options: list[str] = []
    if plain:
        options += ["rule", "binary"]
    if plain_endpoints:
        options += ["endpoint", "port"]
    if any(len(ep.get("rules", [])) > 1 for _, ep in endpoints_of(doc)):
        options.append("allow")
    fs = doc.get("filesystem_policy")
    if isinstance(fs, dict) and (fs.get("read_only") or fs.get("read_write")):
        options.append("path")
    kind = choice(rng, options)
    if kind == "rule":
        del rules[rng.choice(list(plain))]
    elif kind == "binary":
        r = rng.choice(list(plain.values()))
        if not r.get("binaries"):
            return None
        r["binaries"].pop(rng.randrange(len(r["binaries"])))
    elif kind == "endpoint":
        r, ep = rng.choice(plain_endpoints)
        r["endpoints"].remove(ep)
    elif kind == "port":
        _, ep = rng.choice(plain_endpoints)
        if len(ep.get("ports", [])) < 2:
            return None
        ep["ports"].pop(rng.randrange(len(ep["ports"])))
    elif kind == "allow":
        ep = rng.choice([ep for _, ep in endpoints_of(doc) if len(ep.get("rules", [])) > 1])
        ep["rules"].pop(rng.randrange(len(ep["rules"])))
    elif kind == "path":
        assert isinstance(fs, dict)
        name = rng.choice([n for n in ("read_only", "read_write") if fs.get(n)])
        fs[name].pop(rng.randrange(len(fs[name])))
    return kind


def _configured(endpoint: Document) -> bool:
    """An endpoint the runtime lists among a connection's configurations."""
    protocol = str(endpoint.get("protocol") or "").lower()
    return protocol not in ("", "tcp") or any(endpoint.get(name) for name in ("tls", "allowed_ips"))


def _configures(rule: Document) -> bool:
    return any(_configured(ep) for ep in rule.get("endpoints", []) if isinstance(ep, dict))


def removal(
    candidate_doc: Document, boundary_text: str, rng: random.Random, check: Check
) -> tuple[CheckOutcome | None, list[Finding]]:
    """For a ``within`` candidate: a smaller candidate must not exceed."""
    smaller = copy.deepcopy(candidate_doc)
    kind = remove_one(smaller, rng)
    if kind is None:
        return None, []
    text = render(smaller)
    outcome = check(text, boundary_text)
    if outcome.verdict is Verdict.EXCEEDS:
        detail = f"removing one {kind} made a within candidate exceed: {outcome.counterexample}"
        return outcome, [Finding("removal_exceeds", detail, text, boundary_text)]
    return outcome, []


def foreign_host(
    candidate_doc: Document, boundary_text: str, rng: random.Random, check: Check
) -> tuple[CheckOutcome, list[Finding]]:
    """A candidate that adds a host no boundary names must not be within."""
    bigger = copy.deepcopy(candidate_doc)
    endpoint: Document = {"host": rng.choice(v.FOREIGN_HOSTS), "port": rng.choice((443, 80))}
    if rng.random() < 0.5:
        endpoint.update({"protocol": "rest", "enforcement": "enforce", "access": "read-only"})
    rules_of(bigger)["zz_foreign"] = {
        "endpoints": [endpoint],
        "binaries": [{"path": rng.choice(v.EXACT_BINARIES)}],
    }
    text = render(bigger)
    outcome = check(text, boundary_text)
    if outcome.verdict is Verdict.WITHIN:
        return outcome, [
            Finding("foreign_within", f"{endpoint} reported within", text, boundary_text)
        ]
    return outcome, []

"""Whether a policy allows one concrete network action (spec §9.1, §9.3, §9.4).

    network_allows(P, a) = (∨ rule_allows) ∧ ¬(∨ rule_denies) ∧ ip_ok(P, a)

The three parts are independent disjunctions over the whole policy, exactly as in the
reference model: an action may be granted by one entry, have its address accepted by
another entry that it connects to, and be denied by a third rule (denies are
policy-wide and also fire for the ancestor binary).

Host matching is case-insensitive (see ``prover.concrete.glob``); everything else is
compared as given: the action method must equal the policy method upper-cased (``*``
any method; ``GET`` also ``HEAD``), and paths and query values are case-sensitive.

With ``Policy.engine_requests`` (the default semantics) a REST rule judges a request as
OpenShell's engine does: both methods upper-cased (``sandbox-policy.rego``
``method_matches``) and the path canonicalised first, a path the runtime refuses
(raw ``%2F``: ``l7/path.rs`` ``canonicalize_request_target``) matching no REST rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from prover.concrete.glob import binary_matches, host_matches, path_matches
from prover.concrete.ip import endpoint_ip_ok
from prover.concrete.query import (
    QueryValues,
    action_query,
    allow_query_matches,
    deny_query_matches,
)
from prover.concrete.request import canonical_path
from prover.policy.model import Endpoint, HttpRule, NetworkAction, Policy, Rule


class GrantEntry(NamedTuple):
    """A policy entry whose allow part matches an action.

    ``allow_rule_index`` is the matching REST rule's ``HttpRule.index``; ``None`` for an
    L4 endpoint or an ``access`` preset endpoint (the grant is the endpoint itself).
    """

    rule_key: str
    endpoint_index: int
    allow_rule_index: int | None


class DenyEntry(NamedTuple):
    """A REST deny rule that matches an action (``HttpRule.index`` of the deny)."""

    rule_key: str
    endpoint_index: int
    deny_rule_index: int


def _ascii_upper(text: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in text)


def method_matches(policy_method: str, action_method: str, *, engine: bool = False) -> bool:
    """Policy ``*`` is any method; ``GET`` (any case) is GET or HEAD; else equality
    with the policy method upper-cased. An empty policy method matches nothing.

    ``engine``: the request's method is upper-cased too, as OpenShell's Rego does
    (``sandbox-policy.rego`` ``method_matches``: ``upper(actual) == upper(expected)``,
    ``upper(actual) == "HEAD"`` under ``GET``); the proxy passes the method through as
    sent (``l7/rest.rs``), and it is an HTTP token there, so ASCII upper-casing is
    ``upper``. The reference model compares the request's method as given."""
    if policy_method == "":
        return False
    if policy_method == "*":
        return True
    if engine:
        action_method = _ascii_upper(action_method)
    expected = _ascii_upper(policy_method)
    if expected == "GET":
        return action_method in ("GET", "HEAD")
    return action_method == expected


def check_action(action: NetworkAction) -> None:
    """Reject actions that lack the fields their kind needs (``ValueError``)."""
    if action.protocol not in ("l4", "rest"):
        raise ValueError(f"unknown network protocol {action.protocol!r}")
    if action.binary_identity_required and (
        action.binary is None or action.ancestor_binary is None
    ):
        raise ValueError("binary identity mode needs both binary and ancestor_binary")
    if action.protocol == "rest" and (action.method is None or action.path is None):
        raise ValueError("a REST action needs a method and a path")


def binaries_match(rule: Rule, action: NetworkAction) -> bool:
    """Identity off: every rule applies. On: some binary glob matches the binary or
    its ancestor (a rule without binaries then matches nothing)."""
    if not action.binary_identity_required:
        return True
    candidates = [b for b in (action.binary, action.ancestor_binary) if b is not None]
    return any(binary_matches(g, b) for g in rule.binaries for b in candidates)


def _shadowed(endpoint: Endpoint, action: NetworkAction) -> bool:
    """Some inspected endpoint of a matching rule takes the connection over."""
    return any(
        action.port in shadow.ports
        and host_matches(shadow.host, action.host)
        and binaries_match(Rule("", "", shadow.binaries, ()), action)
        for shadow in endpoint.shadows
    )


def endpoint_matches_connection(endpoint: Endpoint, action: NetworkAction) -> bool:
    return action.port in endpoint.ports and host_matches(endpoint.host, action.host)


class _Request(NamedTuple):
    """What a REST rule sees of an action: its method, its path, its query and whether
    the methods compare as the engine compares them."""

    method: str
    path: str
    query: QueryValues
    engine: bool


def _request(policy: Policy, action: NetworkAction) -> _Request | None:
    """The action as the policy's REST rules see it; ``None`` when the runtime refuses
    its path before any rule (engine reading only: ``l7/path.rs``
    ``canonicalize_request_target`` refuses a raw ``%2F``, traversal above the root,
    control bytes; the reference model matches the path as given)."""
    path = action.path or ""
    if policy.engine_requests and action.protocol == "rest":
        seen = canonical_path(path)
        if seen is None:
            return None
        path = seen
    return _Request(action.method or "", path, action_query(action), policy.engine_requests)


def _rest_selected(endpoint: Endpoint, action: NetworkAction, request: _Request) -> bool:
    """Connection, REST layer and the endpoint-level path selector."""
    return (
        endpoint.layer == "rest"
        and action.protocol == "rest"
        and endpoint_matches_connection(endpoint, action)
        and path_matches(endpoint.path, request.path)
    )


def _http_rule_matches(rule: HttpRule, request: _Request, *, deny: bool) -> bool:
    query = request.query
    if not method_matches(rule.method, request.method, engine=request.engine):
        return False
    if not path_matches(rule.path, request.path):
        return False
    if deny:
        return deny_query_matches(rule.query, query)
    return allow_query_matches(rule.query, query)


def _endpoint_grants(
    endpoint: Endpoint, action: NetworkAction, request: _Request | None
) -> Iterator[int | None]:
    """Yield one allow-rule index (or ``None``) per way the endpoint grants ``action``."""
    if not endpoint.grants:
        return
    if endpoint.layer == "l4":
        if endpoint_matches_connection(endpoint, action) and not _shadowed(endpoint, action):
            yield None
        return
    if request is None or not _rest_selected(endpoint, action, request):
        return
    if _shadowed(endpoint, action):
        return
    matching = [r for r in endpoint.allow_rules if _http_rule_matches(r, request, deny=False)]
    if endpoint.access is not None:
        if matching:
            yield None
        return
    for rule in matching:
        yield rule.index


def _endpoint_denials(
    endpoint: Endpoint, action: NetworkAction, request: _Request | None
) -> Iterator[int]:
    if not endpoint.denies or not endpoint.deny_rules or request is None:
        return
    if not _rest_selected(endpoint, action, request):
        return
    for rule in endpoint.deny_rules:
        if _http_rule_matches(rule, request, deny=True):
            yield rule.index


def granting_entries(policy: Policy, action: NetworkAction) -> list[GrantEntry]:
    """Every (rule, endpoint, allow rule) whose allow part matches ``action``.

    This is the ``∨ rule_allows`` part only; the action is allowed iff this is
    non-empty, ``denying_entries`` is empty and ``ip_ok`` holds.
    """
    check_action(action)
    request = _request(policy, action)
    return [
        GrantEntry(rule.key, endpoint.index, allow_index)
        for rule in policy.rules
        if binaries_match(rule, action)
        for endpoint in rule.endpoints
        for allow_index in _endpoint_grants(endpoint, action, request)
    ]


def denying_entries(policy: Policy, action: NetworkAction) -> list[DenyEntry]:
    """Every (rule, endpoint, deny rule) that denies ``action``, policy-wide."""
    check_action(action)
    request = _request(policy, action)
    return [
        DenyEntry(rule.key, endpoint.index, deny_index)
        for rule in policy.rules
        if binaries_match(rule, action)
        for endpoint in rule.endpoints
        for deny_index in _endpoint_denials(endpoint, action, request)
    ]


def ip_ok(policy: Policy, action: NetworkAction) -> bool:
    """Some endpoint the action connects to (for a matching rule) accepts its address."""
    check_action(action)
    return any(
        endpoint.admits
        and endpoint_matches_connection(endpoint, action)
        and endpoint_ip_ok(endpoint, action)
        for rule in policy.rules
        if binaries_match(rule, action)
        for endpoint in rule.endpoints
    )


def network_allows(policy: Policy, action: NetworkAction) -> bool:
    """The reference's ``policy_allows`` for one concrete action."""
    return (
        bool(granting_entries(policy, action))
        and not denying_entries(policy, action)
        and ip_ok(policy, action)
    )

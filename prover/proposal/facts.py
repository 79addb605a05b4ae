"""Per-endpoint facts of the reachability model (spec §3.3), with the sound corrections.

The reference reads, per endpoint: ``l7_enforced`` (``protocol`` non-empty), the allowed
method set (access preset, else the upper-cased ``rules[].allow.method``, ``*`` meaning
all seven methods) and ``l7_allows_write`` (not enforced, or no methods, or a write method
among them). Divergences, each because following the reference would miss real access:

* **audit mode** — ``enforcement`` other than ``enforce`` (including omitted, the default)
  only *logs* a request the rules would deny and forwards it (policy-schema §10). Such an
  endpoint restricts nothing, so it is modelled like an L4 endpoint: writes possible, no
  method set. ``protocol: sql`` can never be enforced and ``tcp`` is L4 by definition
  (the reference's ``tcp`` handling is equivalent, spec §11.9).
* **non-REST writes** — the reference only recognises HTTP write methods, so a GraphQL
  ``mutation``, an MCP ``tools/call``, any JSON-RPC method or WebSocket client text frames
  count as "no write". Here they are write channels: GraphQL ``mutation``/``*``
  operations, MCP ``tools/call`` (or a ``tools/`` glob covering it, or
  ``mcp.allow_all_known_mcp_methods``), any JSON-RPC allow rule, and WebSocket
  ``WEBSOCKET_TEXT``/``*`` or GraphQL-over-WebSocket mutations.
* **capability labels** — GraphQL rules have no ``method``; the reference labels them
  ``""``. They are labelled by their ``operation_type`` here (``QUERY``, ``MUTATION``...).

* **inert REST rules** — a REST allow rule without ``path`` or with a query value ``""``
  allows nothing at run time (``opa.rs`` ``proto_to_opa_data_json`` sends its path as
  ``""``, ``l7_matchers_to_json`` drops an empty glob; ``sandbox-policy.rego``
  ``path_matches``/``query_value_matches`` then match nothing), so its method is no
  label; the reference counts it.

``deny_rules`` never narrow the method set (spec §11.3): an over-approximation.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from prover.proposal.endpoint import Data, items, option, text

READ_METHODS: tuple[str, ...] = ("GET", "HEAD", "OPTIONS")
WRITE_METHODS: frozenset[str] = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ALL_METHODS: tuple[str, ...] = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
PRESET_METHODS: dict[str, tuple[str, ...]] = {
    "read-only": READ_METHODS,
    "read-write": ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"),
    "full": ALL_METHODS,
}
_GRAPHQL_WRITES = frozenset({"mutation", "*"})


@dataclass(frozen=True, slots=True)
class EndpointFacts:
    """What one endpoint lets a permitted binary do."""

    inspected: bool
    """L7 rules are enforced (protocol set, ``enforcement: enforce``, not tcp/sql)."""
    writes: bool
    """Some request that carries data out is allowed (``l7_allows_write``)."""
    methods: frozenset[str]
    """Method labels for capability paths; empty for uninspected endpoints."""


def allow_matchers(endpoint: Data) -> list[Data]:
    matchers: list[Data] = []
    for rule in items(endpoint, "rules"):
        allow = rule.get("allow") if isinstance(rule, dict) else None
        if isinstance(allow, dict):
            matchers.append(allow)
    return matchers


def reference_methods(endpoint: Data) -> frozenset[str]:
    """The reference's ``allowed_methods`` (spec §3.3), before any divergence."""
    if not text(endpoint, "protocol"):
        return frozenset()
    preset = PRESET_METHODS.get(text(endpoint, "access"))
    if preset is not None:
        return frozenset(preset)
    methods: set[str] = set()
    for allow in allow_matchers(endpoint):
        method = text(allow, "method").upper()
        if method == "*":
            return frozenset(ALL_METHODS)
        methods.add(method)
    return frozenset(methods)


def _allows_nothing(allow: Data) -> bool:
    """A REST allow rule OpenShell's engine never matches
    (:func:`prover.policy.normalize.inert_rule`)."""
    query = allow.get("query")
    empty_value = isinstance(query, dict) and any(value == "" for value in query.values())
    return not text(allow, "path") or empty_value


def _engine_methods(endpoint: Data) -> frozenset[str]:
    """:func:`reference_methods` without the REST allow rules that allow nothing."""
    if text(endpoint, "protocol").lower() != "rest" or text(endpoint, "access"):
        return reference_methods(endpoint)
    methods: set[str] = set()
    for allow in allow_matchers(endpoint):
        if _allows_nothing(allow):
            continue
        method = text(allow, "method").upper()
        if method == "*":
            return frozenset(ALL_METHODS)
        methods.add(method)
    return frozenset(methods)


def _is_inspected(endpoint: Data) -> bool:
    protocol = text(endpoint, "protocol").lower()
    if protocol in ("", "tcp", "sql"):
        return False
    return text(endpoint, "enforcement") == "enforce"


def _labels(endpoint: Data) -> frozenset[str]:
    protocol = text(endpoint, "protocol").lower()
    labels = set(_engine_methods(endpoint))
    if protocol in ("graphql", "websocket"):
        for allow in allow_matchers(endpoint):
            operation = text(allow, "operation_type")
            if not text(allow, "method") and operation:
                labels.discard("")
                labels.add(operation.upper())
    return frozenset(labels)


def _protocol_writes(endpoint: Data, labels: frozenset[str]) -> bool:
    protocol = text(endpoint, "protocol").lower()
    access = text(endpoint, "access")
    matchers = allow_matchers(endpoint)
    if protocol == "json-rpc":
        return bool(matchers)
    if protocol == "mcp":
        if option(endpoint, "mcp", "allow_all_known_mcp_methods") is True:
            return True
        return any(fnmatch.fnmatchcase("tools/call", text(m, "method")) for m in matchers)
    if protocol == "graphql":
        if access in ("read-write", "full"):
            return True
        return any(text(m, "operation_type").lower() in _GRAPHQL_WRITES for m in matchers)
    if protocol == "websocket":
        if access == "full" or {"WEBSOCKET_TEXT", "*", "MUTATION"} & labels:
            return True
        return any(text(m, "operation_type").lower() in _GRAPHQL_WRITES for m in matchers)
    return False


def endpoint_facts(endpoint: Data) -> EndpointFacts:
    if not _is_inspected(endpoint):
        return EndpointFacts(inspected=False, writes=True, methods=frozenset())
    labels = _labels(endpoint)
    http_write = not reference_methods(endpoint) or bool(labels & WRITE_METHODS)
    writes = http_write or _protocol_writes(endpoint, labels)
    return EndpointFacts(inspected=True, writes=writes, methods=labels)

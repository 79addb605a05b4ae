"""Endpoint ambiguity (spec §2.4 step 4, policy-schema §11): ``find_endpoint_ambiguities``
(``openshell-policy/src/ambiguity.rs``, OpenShell 2f7fb65), run by the runtime on every
policy it loads (:mod:`prover.runtime.validation`) and by ``assess`` on a merge.

Two endpoints (any rules of the effective candidate) whose ports intersect and whose host
patterns can name a common host (an empty host overlaps everything) must agree on
explicit-TCP-ness, normalised ``tls`` and normalised ``allowed_ips``. When both feed the
request pipeline (an L7 protocol, ``allowed_ips``, ``tls`` or a credential binding) and
their ``path`` selectors overlap with equal specificity, they must also agree on the
request-pipeline metadata (protocol, enforcement, flags, signing, binding, body limits).

The reference also compares the internal ``advisor_proposed`` provenance bit; it cannot be
authored and is not modelled here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from prover.extended.hosts import literal_ends_agree
from prover.runtime.data import Data, flag, items, number, option, ports, rules_of, text
from prover.runtime.globs import host_tokens, languages_overlap, runtime_path_tokens
from prover.runtime.l7_validation import json_rpc_body_limit

#: ``DEFAULT_BODY_LIMIT`` (ambiguity.rs): an unset body limit compares as this.
DEFAULT_BODY_LIMIT = 65_536


@lru_cache(maxsize=65536)
def _host_overlap(left: str, right: str) -> bool:
    if not left or not right:
        return True
    left, right = left.lower(), right.lower()
    if not literal_ends_agree(left, right):
        return False  # no host starts and ends like both (the search would say so slowly)
    return languages_overlap(host_tokens(left), host_tokens(right), ".")


def _path_overlap(left: str, right: str) -> bool:
    if not left or not right or left in ("**", "/**") or right in ("**", "/**"):
        return True
    return languages_overlap(runtime_path_tokens(left), runtime_path_tokens(right), "/")


def _specificity(path: str) -> int:
    return sum(1 for char in path if char != "*")


def _tls(endpoint: Data) -> str:
    return "skip" if text(endpoint, "tls").lower() == "skip" else "auto"


def _graphql_policy(endpoint: Data) -> bool:
    keys = ("operation_type", "operation_name", "fields")
    allow = any(any((r.get("allow") or {}).get(k) for k in keys) for r in items(endpoint, "rules"))
    deny = any(any(r.get(k) for k in keys) for r in items(endpoint, "deny_rules"))
    persisted = text(endpoint, "persisted_queries")
    return (
        bool(endpoint.get("graphql_persisted_queries"))
        or (persisted not in ("", "deny"))
        or allow
        or deny
    )


def _feeds_pipeline(endpoint: Data) -> bool:
    protocol = text(endpoint, "protocol").lower()
    return (
        (bool(protocol) and protocol != "tcp")
        or bool(items(endpoint, "allowed_ips"))
        or bool(text(endpoint, "tls"))
        or isinstance(endpoint.get("credential_binding"), dict)
    )


def _render(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    return str(value)


def _conflicts(fields: list[tuple[str, object, object]]) -> list[str]:
    return [f"{name}={_render(a)} vs {_render(b)}" for name, a, b in fields if a != b]


def _connection(left: Data, right: Data) -> list[str]:
    def ips(endpoint: Data) -> list[str]:
        return sorted({str(v).strip().lower() for v in items(endpoint, "allowed_ips")})

    def tcp(endpoint: Data) -> bool:
        return text(endpoint, "protocol").lower() == "tcp"

    return _conflicts(
        [
            ("transparent_tcp_eligible", tcp(left), tcp(right)),
            ("tls", _tls(left), _tls(right)),
            ("allowed_ips", ips(left), ips(right)),
        ]
    )


def _pipeline(left: Data, right: Data) -> list[str]:
    def protocol(endpoint: Data) -> str:
        value = text(endpoint, "protocol").lower()
        return "" if value == "tcp" else value

    def enforcement(endpoint: Data) -> str:
        return "enforce" if text(endpoint, "enforcement").lower() == "enforce" else "audit"

    def binding(endpoint: Data) -> str:
        return text(endpoint.get("credential_binding") or {}, "provider")

    fields: list[tuple[str, object, object]] = [
        ("protocol", protocol(left), protocol(right)),
        ("enforcement", enforcement(left), enforcement(right)),
    ]
    for flag_name in (
        "allow_encoded_slash",
        "websocket_credential_rewrite",
        "request_body_credential_rewrite",
    ):
        fields.append((flag_name, flag(left, flag_name), flag(right, flag_name)))
    lp, rp = text(left, "protocol").lower(), text(right, "protocol").lower()
    if lp == rp == "websocket":
        fields.append(("websocket_graphql_policy", _graphql_policy(left), _graphql_policy(right)))
    for name in ("credential_signing", "signing_service", "signing_region"):
        fields.append((name, text(left, name), text(right, name)))
    fields.append(("credential_binding.provider", binding(left), binding(right)))
    if lp == rp == "graphql":
        fields.append(
            (
                "graphql_max_body_bytes",
                number(left, "graphql_max_body_bytes") or DEFAULT_BODY_LIMIT,
                number(right, "graphql_max_body_bytes") or DEFAULT_BODY_LIMIT,
            )
        )
    if lp == rp and lp in ("json-rpc", "mcp"):
        fields.append(
            (
                "json_rpc_max_body_bytes",
                json_rpc_body_limit(left) or DEFAULT_BODY_LIMIT,
                json_rpc_body_limit(right) or DEFAULT_BODY_LIMIT,
            )
        )
    if lp == rp == "mcp":

        def strict(endpoint: Data) -> bool:
            return option(endpoint, "mcp", "strict_tool_names") is not False

        fields.append(("mcp.strict_tool_names", strict(left), strict(right)))
    return _conflicts(fields)


def _selector(endpoint: Data) -> str:
    host = text(endpoint, "host") or "<any-host>"
    return (
        f"{host}:{','.join(str(p) for p in sorted(set(ports(endpoint))))}{text(endpoint, 'path')}"
    )


def _candidate_pairs(hosts: list[str]) -> list[tuple[int, int]]:
    """Index pairs (i < j) whose hosts may overlap: equal concrete hosts, or any pair
    involving a wildcard or empty host. Avoids comparing every pair of concrete hosts."""
    by_host: dict[str, list[int]] = {}
    open_ended: list[int] = []
    for position, host in enumerate(hosts):
        if not host or "*" in host:
            open_ended.append(position)
        else:
            by_host.setdefault(host, []).append(position)
    pairs: set[tuple[int, int]] = set()
    for group in by_host.values():
        pairs.update((a, b) for i, a in enumerate(group) for b in group[i + 1 :])
    for a in open_ended:
        pairs.update((min(a, b), max(a, b)) for b in range(len(hosts)) if b != a)
    return sorted(pairs)


#: Endpoint pairs compared between two calls of the caller's ``checkpoint``.
CHECKPOINT_EVERY_PAIRS = 256


def ambiguities(policy: Data, checkpoint: Callable[[], None] | None = None) -> list[str]:
    """Every conflicting pair, rendered as the reference does, in rule-key order.
    ``checkpoint`` is called every :data:`CHECKPOINT_EVERY_PAIRS` pairs (a wildcard is
    compared with every other endpoint)."""
    return [message for _, _, message in ambiguous_pairs(policy, checkpoint)]


Endpoint = tuple[str, int]


def ambiguous_pairs(
    policy: Data, checkpoint: Callable[[], None] | None = None
) -> list[tuple[Endpoint, Endpoint, str]]:
    """Every conflicting pair as :func:`ambiguities` finds it: each endpoint by its rule
    key and index, and the message."""
    listed = [
        (text(rule, "name") or key, index, endpoint, key)
        for key, rule in rules_of(policy)
        for index, endpoint in enumerate(items(rule, "endpoints"))
    ]
    hosts = [text(endpoint, "host").lower() for _, _, endpoint, _ in listed]
    port_sets = [frozenset(p for p in ports(endpoint) if p > 0) for _, _, endpoint, _ in listed]
    found: list[tuple[Endpoint, Endpoint, str]] = []
    for count, (a, b) in enumerate(_candidate_pairs(hosts), start=1):
        if checkpoint is not None and count % CHECKPOINT_EVERY_PAIRS == 0:
            checkpoint()
        (left_name, left_index, left, left_key) = listed[a]
        (right_name, right_index, right, right_key) = listed[b]
        shared = sorted(port_sets[a] & port_sets[b])
        if not shared or not _host_overlap(hosts[a], hosts[b]):
            continue
        conflicts = _connection(left, right)
        left_path, right_path = text(left, "path"), text(right, "path")
        if (
            _feeds_pipeline(left)
            and _feeds_pipeline(right)
            and _path_overlap(left_path, right_path)
            and _specificity(left_path) == _specificity(right_path)
        ):
            conflicts.extend(_pipeline(left, right))
        if conflicts:
            left_side = f"'{left_name}' endpoint[{left_index}] ({_selector(left)})"
            right_side = f"'{right_name}' endpoint[{right_index}] ({_selector(right)})"
            message = (
                f"network policies {left_side} and {right_side} overlap on port(s) "
                f"{','.join(str(p) for p in shared)} with conflicting metadata: "
                + "; ".join(conflicts)
            )
            found.append(((left_key, left_index), (right_key, right_index), message))
    return found

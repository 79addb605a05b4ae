"""Reading a policy's YAML as ``parse_sandbox_policy`` does (``openshell-policy/src/lib.rs``).

The serde structs there (``PolicyFile``, ``FilesystemDef``, ``LandlockDef``,
``ProcessDef``, ``NetworkPolicyRuleDef``, ``NetworkEndpointDef``, ``L7RuleDef``,
``L7AllowDef``, ``L7DenyRuleDef``, ``QueryAnyDef``, ``NetworkBinaryDef``) all carry
``deny_unknown_fields``: any other key, the legacy top-level ``inference`` included, is a
parse error and the policy never runs. ``to_proto`` then normalises ``port``/``ports``
(``ports`` wins) and names a rule by its key when ``name`` is empty.

Fields the oracle does not evaluate (TLS, ``allowed_ips``, GraphQL, JSON-RPC/MCP, SQL
commands, credential signing and rewriting, middlewares) are kept and listed in
``Policy.unmodelled``: validation reads what it needs of them, and a policy that runs
with any of them raises :class:`Unmodelled`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.soundness.sandbox_oracle.errors import Unmodelled

TOP_KEYS = {
    "version",
    "filesystem_policy",
    "landlock",
    "process",
    "network_policies",
    "network_middlewares",
}
FS_KEYS = {"include_workdir", "read_only", "read_write"}
LANDLOCK_KEYS = {"compatibility"}
PROCESS_KEYS = {"run_as_user", "run_as_group"}
RULE_KEYS = {"name", "endpoints", "binaries"}
ENDPOINT_KEYS = {
    "host",
    "path",
    "port",
    "ports",
    "protocol",
    "tls",
    "enforcement",
    "access",
    "rules",
    "allowed_ips",
    "deny_rules",
    "allow_encoded_slash",
    "websocket_credential_rewrite",
    "request_body_credential_rewrite",
    "allow_uninspected_credentials",
    "persisted_queries",
    "graphql_persisted_queries",
    "graphql_max_body_bytes",
    "credential_signing",
    "signing_service",
    "signing_region",
    "credential_binding",
    "json_rpc",
    "mcp",
}
#: Endpoint fields the oracle reads; the others are unmodelled when set.
ENDPOINT_MODELLED = {
    "host",
    "path",
    "port",
    "ports",
    "protocol",
    "enforcement",
    "access",
    "rules",
    "deny_rules",
}
MATCHER_KEYS = {
    "method",
    "path",
    "command",
    "query",
    "operation_type",
    "operation_name",
    "fields",
    "tool",
    "params",
}
BINARY_KEYS = {"path", "harness"}
STANZA_KEYS = {
    "json_rpc": {"max_body_bytes"},
    "mcp": {"max_body_bytes", "strict_tool_names", "allow_all_known_mcp_methods"},
    "credential_binding": {"provider"},
}


class ParseError(Exception):
    """The runtime's parser refuses the text; the message says why."""


@dataclass(frozen=True)
class Matcher:
    """A REST allow or deny matcher. ``query`` maps a key to ``("glob", s)`` or
    ``("any", [s...])`` as ``matcher_def_to_proto`` keeps them."""

    method: str = ""
    path: str = ""
    query: tuple[tuple[str, tuple[str, tuple[str, ...]]], ...] = ()
    #: Unmodelled fields set (command, GraphQL, MCP selectors), with their values.
    other: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Endpoint:
    host: str = ""
    path: str = ""
    ports: tuple[int, ...] = ()
    protocol: str = ""
    tls: str = ""
    enforcement: str = ""
    access: str = ""
    rules: tuple[Matcher, ...] = ()
    deny_rules: tuple[Matcher, ...] = ()
    allowed_ips: tuple[str, ...] = ()
    #: Which fields were set (for validation's explicit-tcp check).
    set_fields: frozenset[str] = frozenset()
    #: Fields the oracle does not evaluate, with their values (validation reads some).
    extra: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str, default: Any = "") -> Any:
        return dict(self.extra).get(name, default)


@dataclass(frozen=True)
class Rule:
    key: str
    name: str
    endpoints: tuple[Endpoint, ...]
    binaries: tuple[str, ...]


@dataclass(frozen=True)
class Policy:
    """The proto ``SandboxPolicy`` after ``to_proto``; None marks an absent section."""

    filesystem: tuple[bool, tuple[str, ...], tuple[str, ...]] | None = None
    landlock: str | None = None
    process: tuple[str, str] | None = None
    rules: tuple[Rule, ...] = ()
    middlewares: dict[str, Any] = field(default_factory=dict)
    #: Where the policy sets something the oracle does not evaluate. Validation still
    #: runs (a violation refuses the policy whatever else it says); a policy that runs
    #: with any of these is :class:`Unmodelled`.
    unmodelled: tuple[str, ...] = ()


class _StrictLoader(yaml.SafeLoader):
    """Duplicate keys and merge keys are unmodelled (serde_yml's handling differs)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise Unmodelled("YAML merge keys")
        key = loader.construct_object(key_node)
        if key in seen:
            raise Unmodelled(f"duplicate YAML key {key!r}")
        seen.add(key)
    return loader.construct_mapping(node)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _map(value: Any, keys: set[str], where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParseError(f"{where}: expected a mapping")
    for key in value:
        if key not in keys:
            raise ParseError(f"{where}: unknown field `{key}`")
    return {k: v for k, v in value.items() if v is not None}


def _str(value: Any, where: str, numeric_ok: bool = False) -> str:
    if isinstance(value, str):
        return value
    if numeric_ok and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise Unmodelled(f"{where}: non-string scalar {value!r}")


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ParseError(f"{where}: expected a sequence")
    return value


def _port(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unmodelled(f"{where}: non-integer port {value!r}")
    if not 0 <= value <= 65535:
        raise ParseError(f"{where}: invalid value {value}, expected u16")
    return value


def _matcher(value: Any, where: str) -> Matcher:
    raw = _map(value, MATCHER_KEYS, where)
    other = tuple(
        (key, raw[key])
        for key in ("command", "operation_type", "operation_name", "fields", "tool", "params")
        if raw.get(key) not in (None, "", [], {})
    )
    query = []
    for key, matcher in _map(raw.get("query"), _AnyKeys(), f"{where}.query").items():
        if isinstance(matcher, str):
            query.append((str(key), ("glob", (matcher,))))
        elif isinstance(matcher, dict):
            items = _map(matcher, {"any"}, f"{where}.query.{key}")
            values = [_str(v, f"{where}.query.{key}.any") for v in _list(items.get("any"), where)]
            query.append((str(key), ("any", tuple(values))))
        else:
            raise Unmodelled(f"{where}.query.{key}: matcher {matcher!r}")
    return Matcher(
        method=_str(raw.get("method", ""), f"{where}.method"),
        path=_str(raw.get("path", ""), f"{where}.path"),
        query=tuple(sorted(query)),
        other=other,
    )


class _AnyKeys(set):  # type: ignore[type-arg]
    """A key set that admits every key (query maps are open)."""

    def __contains__(self, item: object) -> bool:
        return True


def _endpoint(value: Any, where: str) -> Endpoint:
    raw = _map(value, ENDPOINT_KEYS, where)
    set_fields = frozenset(k for k, v in raw.items() if v not in ("", [], {}, False, 0))
    extra = tuple(sorted((k, raw[k]) for k in set_fields - ENDPOINT_MODELLED))
    # The nested structs of unmodelled stanzas are closed too (deny_unknown_fields).
    for key, keys in STANZA_KEYS.items():
        if key in raw:
            _map(raw[key], keys, f"{where}.{key}")
    for name, op in (raw.get("graphql_persisted_queries") or {}).items():
        _map(op, {"operation_type", "operation_name", "fields"}, f"{where}.{name}")
    ports = [_port(p, f"{where}.ports") for p in _list(raw.get("ports"), where)]
    port = _port(raw.get("port", 0), f"{where}.port")
    # to_proto: `ports` takes precedence, else a single non-zero `port` is promoted.
    normalized = ports if ports else ([port] if port > 0 else [])
    rules = []
    for index, rule in enumerate(_list(raw.get("rules"), where)):
        inner = _map(rule, {"allow"}, f"{where}.rules[{index}]")
        if "allow" not in inner:
            raise ParseError(f"{where}.rules[{index}]: missing field `allow`")
        rules.append(_matcher(inner["allow"], f"{where}.rules[{index}].allow"))
    denies = [
        _matcher(d, f"{where}.deny_rules[{i}]")
        for i, d in enumerate(_list(raw.get("deny_rules"), where))
    ]
    return Endpoint(
        host=_str(raw.get("host", ""), f"{where}.host"),
        path=_str(raw.get("path", ""), f"{where}.path"),
        ports=tuple(normalized),
        protocol=_str(raw.get("protocol", ""), f"{where}.protocol"),
        tls=_str(raw.get("tls", ""), f"{where}.tls"),
        enforcement=_str(raw.get("enforcement", ""), f"{where}.enforcement"),
        access=_str(raw.get("access", ""), f"{where}.access"),
        rules=tuple(rules),
        deny_rules=tuple(denies),
        allowed_ips=tuple(_str(ip, where) for ip in _list(raw.get("allowed_ips"), where)),
        set_fields=set_fields,
        extra=extra,
    )


def parse_policy(text: str) -> Policy:
    """``parse_sandbox_policy``: the proto policy, or :class:`ParseError`."""
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        raise ParseError(f"failed to parse sandbox policy YAML: {exc}") from None
    top = _map(data, TOP_KEYS, "policy")
    if "version" not in top:
        raise ParseError("missing field `version`")
    version = top["version"]
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 2**32:
        raise ParseError("version: expected u32")
    filesystem = None
    if "filesystem_policy" in top:  # an explicit null reads as absent (an Option)
        fs = _map(top.get("filesystem_policy"), FS_KEYS, "filesystem_policy")
        include = fs.get("include_workdir", False)
        if not isinstance(include, bool):
            raise Unmodelled("filesystem_policy.include_workdir: not a bool")
        filesystem = (
            include,
            tuple(_str(p, "read_only") for p in _list(fs.get("read_only"), "read_only")),
            tuple(_str(p, "read_write") for p in _list(fs.get("read_write"), "read_write")),
        )
    landlock = None
    if "landlock" in top:
        landlock = _str(
            _map(top["landlock"], LANDLOCK_KEYS, "landlock").get("compatibility", ""),
            "landlock.compatibility",
        )
    process = None
    if "process" in top:
        proc = _map(top["process"], PROCESS_KEYS, "process")
        process = (
            _str(proc.get("run_as_user", ""), "run_as_user", numeric_ok=True),
            _str(proc.get("run_as_group", ""), "run_as_group", numeric_ok=True),
        )
    rules = []
    for key, value in sorted(_map(top.get("network_policies"), _AnyKeys(), "np").items()):
        raw = _map(value, RULE_KEYS, f"network_policies.{key}")
        binaries = []
        for i, b in enumerate(_list(raw.get("binaries"), key)):
            entry = _map(b, BINARY_KEYS, f"network_policies.{key}.binaries[{i}]")
            if "path" not in entry:
                raise ParseError(f"network_policies.{key}.binaries[{i}]: missing field `path`")
            binaries.append(_str(entry["path"], "binaries.path"))
        endpoints = [
            _endpoint(e, f"network_policies.{key}.endpoints[{i}]")
            for i, e in enumerate(_list(raw.get("endpoints"), key))
        ]
        name = _str(raw.get("name", ""), "name") or str(key)
        rules.append(Rule(str(key), name, tuple(endpoints), tuple(binaries)))
    middlewares = _map(top.get("network_middlewares"), _AnyKeys(), "network_middlewares")
    unmodelled = ["network_middlewares"] if middlewares else []
    for rule in rules:
        for i, ep in enumerate(rule.endpoints):
            where = f"network_policies.{rule.key}.endpoints[{i}]"
            unmodelled += [f"{where}.{name}" for name, _ in ep.extra]
            for j, m in enumerate((*ep.rules, *ep.deny_rules)):
                unmodelled += [f"{where} matcher {j}: {name}" for name, _ in m.other]
    return Policy(filesystem, landlock, process, tuple(rules), dict(middlewares), tuple(unmodelled))

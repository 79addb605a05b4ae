"""The fast path of policy loading: documents read without pydantic, or declined.

``fast_policy`` turns the data of a policy document (after :mod:`prover.policy.mainline`)
into the records of :mod:`prover.policy.records` when every value in it is one it
recognises as plainly valid: the exact Python type the schema demands (no coercion), no
``null`` anywhere, only known fields, ports and integers within their ranges, the
schema's literals, filesystem paths that normalise, and the schema's cross-field rules
(``mcp`` only with protocol mcp, no explicit empty ``rules``/``deny_rules``, version 1).
Anything else, valid or not, is *declined* (``None``) and goes to the pydantic schema,
which stays the one definition of what is valid and the one source of error messages.
So this path never reports an error and never accepts what the schema would refuse;
``tests/prover/policy/test_fast_loader.py`` compares both loaders over the real-policy
corpus, the acceptance cases, generated policies and mutations of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from prover.policy import records as r
from prover.policy.fspath import normalize_filesystem_path

#: How deep an open map (middleware ``config``, MCP ``params``) may nest to be read here.
_MAX_OPEN_DEPTH = 32


class _Decline(Exception):
    """The document holds something this path does not read: the schema decides."""


Reader = Callable[[object], object]


def _string(value: object) -> str:
    if type(value) is not str:
        raise _Decline
    return value


def _boolean(value: object) -> bool:
    if type(value) is not bool:
        raise _Decline
    return value


def _integer(low: int, high: int) -> Reader:
    def read(value: object) -> int:
        if type(value) is not int or not low <= value <= high:
            raise _Decline
        return value

    return read


_port = _integer(0, 65535)
_u32 = _integer(0, 4_294_967_295)
_i32 = _integer(-2_147_483_648, 2_147_483_647)


def _literal(*allowed: str) -> Reader:
    def read(value: object) -> str:
        if type(value) is not str or value not in allowed:
            raise _Decline
        return value

    return read


def _tuple(item: Reader) -> Reader:
    def read(value: object) -> tuple[object, ...]:
        if type(value) is not list:
            raise _Decline
        return tuple(item(element) for element in value)

    return read


def _map(item: Reader) -> Reader:
    def read(value: object) -> dict[str, object]:
        if type(value) is not dict:
            raise _Decline
        return {_string(key): item(element) for key, element in value.items()}

    return read


def _plain(value: object, depth: int = 0) -> None:
    """An open map's value: JSON-like data without null or non-finite numbers."""
    kind = type(value)
    if kind is str or kind is bool or kind is int:
        return
    if kind is float and math.isfinite(value):  # type: ignore[arg-type]
        return
    if depth >= _MAX_OPEN_DEPTH:
        raise _Decline
    if kind is list:
        for item in value:  # type: ignore[attr-defined]
            _plain(item, depth + 1)
        return
    if kind is dict:
        for key, item in value.items():  # type: ignore[attr-defined]
            _string(key)
            _plain(item, depth + 1)
        return
    raise _Decline


def _open_map(value: object) -> dict[str, object]:
    if type(value) is not dict:
        raise _Decline
    for key, item in value.items():
        _string(key)
        _plain(item)
    return dict(value)


def _record(cls: type[r.Record], readers: dict[str, Reader]) -> Reader:
    """A mapping of known fields, each read by its reader; absent fields default."""

    def read(value: object) -> r.Record:
        if type(value) is not dict:
            raise _Decline
        fields: dict[str, object] = {}
        for key, item in value.items():
            reader = readers.get(key)
            if reader is None or item is None:
                raise _Decline
            fields[key] = reader(item)
        return cls(**fields)

    return read


def _required(read: Reader, *names: str) -> Reader:
    def checked(value: object) -> object:
        if type(value) is dict and not all(name in value for name in names):
            raise _Decline
        return read(value)

    return checked


def _paths(value: object) -> tuple[str, ...]:
    result: list[str] = []
    for raw in _tuple(_string)(value):
        normalised = normalize_filesystem_path(raw)  # type: ignore[arg-type]
        if normalised is None or normalised != raw:
            raise _Decline  # the schema keeps how it was spelled (_loose_read_only)
        result.append(normalised)
    return tuple(result)


def _matcher(allow_glob: bool) -> Reader:
    """A string, ``{any: [strings]}`` or (query values only) ``{glob: string}``."""

    def read(value: object) -> object:
        if type(value) is str:
            return value
        if type(value) is not dict or len(value) != 1:
            raise _Decline
        if "any" in value:
            return r.QueryAny(any=_tuple(_string)(value["any"]))
        if allow_glob and "glob" in value:
            return r.QueryGlob(glob=_string(value["glob"]))
        raise _Decline

    return read


_filesystem = _record(
    r.FilesystemPolicySection,
    {"include_workdir": _boolean, "read_only": _paths, "read_write": _paths},
)
_landlock = _record(
    r.LandlockSection, {"compatibility": _literal("best_effort", "hard_requirement")}
)
_process = _record(r.ProcessSection, {"run_as_user": _string, "run_as_group": _string})
_l7_matcher = _record(
    r.L7Matcher,
    {
        "method": _string,
        "path": _string,
        "command": _string,
        "query": _map(_matcher(allow_glob=True)),
        "operation_type": _string,
        "operation_name": _string,
        "fields": _tuple(_string),
        "tool": _matcher(allow_glob=False),
        "params": _open_map,
    },
)
_allow_rule = _record(r.L7AllowRule, {"allow": _l7_matcher})
_graphql_query = _required(
    _record(
        r.GraphqlPersistedQuery,
        {"operation_type": _string, "operation_name": _string, "fields": _tuple(_string)},
    ),
    "operation_type",
)
_endpoint_fields = _record(
    r.EndpointSection,
    {
        "host": _string,
        "port": _port,
        "ports": _tuple(_port),
        "path": _string,
        "allowed_ips": _tuple(_string),
        "protocol": _string,
        "tls": _string,
        "enforcement": _string,
        "access": _string,
        "rules": _tuple(_allow_rule),
        "deny_rules": _tuple(_l7_matcher),
        "allow_encoded_slash": _boolean,
        "allow_uninspected_credentials": _boolean,
        "websocket_credential_rewrite": _boolean,
        "request_body_credential_rewrite": _boolean,
        "credential_signing": _string,
        "signing_service": _string,
        "signing_region": _string,
        "credential_binding": _required(
            _record(r.CredentialBinding, {"provider": _string}), "provider"
        ),
        "persisted_queries": _string,
        "graphql_persisted_queries": _map(_graphql_query),
        "graphql_max_body_bytes": _u32,
        "json_rpc": _record(r.JsonRpcOptions, {"max_body_bytes": _u32}),
        "mcp": _record(
            r.McpOptions,
            {
                "max_body_bytes": _u32,
                "strict_tool_names": _boolean,
                "allow_all_known_mcp_methods": _boolean,
                "versions": _tuple(_string),
            },
        ),
    },
)


def _endpoint(value: object) -> object:
    endpoint = _endpoint_fields(value)
    assert isinstance(endpoint, r.EndpointSection)
    if endpoint.mcp is not None and (endpoint.protocol or "").lower() != "mcp":
        raise _Decline
    present = endpoint.model_fields_set
    if ("rules" in present and not endpoint.rules) or (
        "deny_rules" in present and not endpoint.deny_rules
    ):
        raise _Decline
    return endpoint


_rule = _record(
    r.NetworkRuleSection,
    {
        "name": _string,
        "endpoints": _tuple(_endpoint),
        "binaries": _tuple(_required(_record(r.BinarySection, {"path": _string}), "path")),
    },
)
_middleware = _required(
    _record(
        r.MiddlewareSection,
        {
            "name": _string,
            "middleware": _string,
            "order": _i32,
            "config": _open_map,
            "on_error": _literal("fail_closed", "fail_open"),
            "endpoints": _record(
                r.MiddlewareEndpoints,
                {"include": _tuple(_string), "exclude": _tuple(_string)},
            ),
        },
    ),
    "middleware",
)
_inference = _record(
    r.InferenceSection,
    {"allowed_routes": _tuple(_string), "allowed_routing_hints": _tuple(_string)},
)


def _version(value: object) -> int:
    if type(value) is not int or value != 1:
        raise _Decline
    return value


_policy = _required(
    _record(
        r.AuthoredPolicy,
        {
            "version": _version,
            "cedar_policy": _string,
            "filesystem_policy": _filesystem,
            "landlock": _landlock,
            "process": _process,
            "network_policies": _map(_rule),
            "network_middlewares": _map(_middleware),
            "inference": _inference,
        },
    ),
    "version",
)


def fast_policy(data: object) -> r.AuthoredPolicy | None:
    """The policy of ``data`` as records, or None: the schema must decide."""
    try:
        policy = _policy(data)
    except (_Decline, RecursionError):
        return None
    assert isinstance(policy, r.AuthoredPolicy)
    return policy

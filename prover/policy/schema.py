"""The closed schema of the authored sandbox policy (policy-schema.md), as pydantic models.

Every object is closed (an unknown field is an error) and frozen. Field names are exactly
the YAML names. An optional field that is absent is ``None``; an explicit ``null`` is an
error everywhere except inside the two open maps (middleware ``config`` and MCP
``params``), as in the reference parser. Lists default to empty tuples; the top-level
maps default to empty dicts.

Validation here stays at what the reference *parser* rejects (boundary-check §2): types,
unknown fields, ``null``, ``version``, port range, Landlock compatibility, ``mcp`` on a
non-MCP endpoint and filesystem paths (which are normalised lexically). Whether a shape
is inside the containment model is ``prover.policy.shape``'s job, not this module's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from prover.policy.fspath import normalize_filesystem_path

T = TypeVar("T")

POLICY_VERSION = 1
CUSTOM_ERROR = "policy_value"


def fail(message: str | tuple[str, str], *sub: str | int) -> PydanticCustomError:
    """A validation error with a complete message.

    ``message`` is either the whole sentence or a ``(before, after)`` pair between which
    the offending field's dotted path is inserted. ``sub`` extends pydantic's location
    (the model or field being validated) down to the offending item, so the rendered path
    points at it exactly.
    """
    parts = (message,) if isinstance(message, str) else message
    return PydanticCustomError(CUSTOM_ERROR, "{parts}", {"parts": parts, "sub": sub})


def mainline(info: ValidationInfo) -> bool:
    """Is this the mainline reading (``AuthoredPolicy.model_validate(data,
    context=MAINLINE)``), where the runtime's validator runs after the schema?"""
    return isinstance(info.context, dict) and info.context.get("reading") == "mainline"


#: The validation context of the mainline reading.
MAINLINE = {"reading": "mainline"}


def _reject_null(value: object) -> object:
    if value is None:
        raise PydanticCustomError("null_value", "must not be null")
    return value


# An optional field: absent means None, an explicit null is rejected (``policy_json_schema``
# removes the ``null`` alternative pydantic would otherwise publish for these fields).
Absent = Annotated[T | None, BeforeValidator(_reject_null)]

Port = Annotated[StrictInt, Field(ge=0, le=65535)]
U32 = Annotated[StrictInt, Field(ge=0, le=4_294_967_295)]
I32 = Annotated[StrictInt, Field(ge=-2_147_483_648, le=2_147_483_647)]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------------------------------
# Filesystem, Landlock, process


class FilesystemPolicySection(_Closed):
    """``filesystem_policy``: Landlock paths; see the ``include_workdir`` default."""

    include_workdir: Absent[StrictBool] = Field(
        None,
        description="Add the sandbox working directory to read_write. Omitted: false when "
        "this section is present (the whole section omitted means true).",
    )
    read_only: tuple[StrictStr, ...] = Field((), description="Absolute readable paths.")
    read_write: tuple[StrictStr, ...] = Field(
        (), description="Absolute readable and writable paths."
    )
    #: The normalised read_only paths the document never spells exactly (``/tmp/``):
    #: the runtime's baseline enrichment compares paths as written (``lib.rs``
    #: ``enrich_proto_baseline_paths_with``), so such a ``/tmp`` gets the read-write
    #: baseline beside it.
    _loose_read_only: frozenset[str] = PrivateAttr(default=frozenset())

    @model_validator(mode="wrap")
    @classmethod
    def _spellings(cls, data: Any, handler: Any) -> Any:
        section = handler(data)
        raw = data.get("read_only") if isinstance(data, dict) else None
        if isinstance(raw, list | tuple):
            exact = {p for p in raw if isinstance(p, str)}
            loose = frozenset(p for p in section.read_only if p not in exact)
            if loose:
                section._loose_read_only = loose
        return section

    @field_validator("read_only", "read_write", mode="after")
    @classmethod
    def _normalise(cls, paths: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        result: list[str] = []
        for index, raw in enumerate(paths):
            normalised = normalize_filesystem_path(raw)
            if normalised is None and mainline(info):
                # The mainline parser takes any string; its validator refuses the path
                # (prover.runtime.validation), and the loader then returns no policy.
                result.append(raw)
                continue
            if normalised is None:
                problem = (
                    "must be absolute (start with '/')"
                    if not raw.startswith("/")
                    else "contains a '..' traversal segment"
                )
                raise fail(("filesystem path '", f"' {problem}; got '{raw}'"), index)
            result.append(normalised)
        return tuple(result)


def _compatibility(value: object) -> object:
    # The reference reading refuses any other value. (The runtime reads any other value
    # as best_effort, and so does the default reading: prover.policy.mainline rewrites it
    # before this runs.)
    if isinstance(value, str) and value not in ("best_effort", "hard_requirement"):
        raise fail(
            (
                "field '",
                f"' must be 'best_effort' or 'hard_requirement' (got the string {value!r}); "
                "the runtime silently treats other values as best_effort, so policy-prover "
                "refuses them rather than let a misspelling weaken the policy",
            )
        )
    return value


class LandlockSection(_Closed):
    compatibility: Annotated[
        Literal["best_effort", "hard_requirement"] | None,
        BeforeValidator(_compatibility),
        BeforeValidator(_reject_null),
    ] = Field(None, description="Landlock enforcement mode; omitted means best_effort.")


def _identity(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        raise fail(
            (
                "field '",
                f"' must be a string (got the integer {value}); quote numeric ids in YAML, "
                f"e.g. '{value}'",
            )
        )
    return value


Identity = Annotated[StrictStr, BeforeValidator(_identity)]


class ProcessSection(_Closed):
    run_as_user: Absent[Identity] = Field(
        None, description="'sandbox' or a decimal uid (as a string)."
    )
    run_as_group: Absent[Identity] = Field(
        None, description="'sandbox' or a decimal gid (as a string)."
    )


# ---------------------------------------------------------------------------------------
# L7 matchers


class QueryAny(_Closed):
    """``{any: [...]}``: the value matches if any of the globs matches."""

    any: tuple[StrictStr, ...]


class QueryGlob(_Closed):
    """``{glob: g}``: the object spelling of a single glob (accepted by the runtime)."""

    glob: StrictStr


def _string_list(value: object, *sub: str | int) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise fail(("field '", "' must be a list of strings"), *sub)
    for index, item in enumerate(value):
        if item is None:
            raise fail(("field '", "' must not be null"), *sub, index)
        if not isinstance(item, str):
            raise fail(("field '", "' must be a string"), *sub, index)
    return tuple(value)


def _glob_matcher(value: object, allow_glob: bool, *sub: str | int) -> object:
    """A string, ``{any: [..]}`` or (query only) ``{glob: g}``, checked field by field."""
    if isinstance(value, str):
        return value
    forms = "a string, {any: [...]} or {glob: ...}" if allow_glob else "a string or {any: [...]}"
    if value is None:
        raise fail(("field '", "' must not be null"), *sub)
    if not isinstance(value, dict):
        raise fail(("field '", f"' must be {forms}"), *sub)
    known = {"any", "glob"} if allow_glob else {"any"}
    for key in value:
        if key not in known:
            raise fail(("unknown field '", "' in authored policy"), *sub, key)
    if len(value) != 1:
        raise fail(("field '", f"' must be {forms}"), *sub)
    if "any" in value:
        return QueryAny(any=_string_list(value["any"], *sub, "any"))
    glob = value["glob"]
    if not isinstance(glob, str):
        raise fail(("field '", "' must be a string"), *sub, "glob")
    return QueryGlob(glob=glob)


def _query_map(value: object) -> object:
    if value is None or not isinstance(value, dict):
        return _reject_null(value)
    return {key: _glob_matcher(item, True, key) for key, item in value.items()}


def _tool(value: object) -> object:
    return _glob_matcher(value, False)


QueryValue = StrictStr | QueryAny | QueryGlob


class L7Matcher(_Closed):
    """An allow (inside ``{allow: ...}``) or deny matcher; the union of all protocols."""

    method: Absent[StrictStr] = Field(None, description="HTTP/JSON-RPC/MCP method or '*'.")
    path: Absent[StrictStr] = Field(None, description="Request path glob ('/' separator).")
    command: Absent[StrictStr] = Field(None, description="SQL command.")
    query: Annotated[dict[StrictStr, QueryValue] | None, BeforeValidator(_query_map)] = Field(
        None, description="Query parameter -> glob, {any: [globs]} or {glob: g}."
    )
    operation_type: Absent[StrictStr] = Field(None, description="GraphQL operation type.")
    operation_name: Absent[StrictStr] = Field(None, description="GraphQL operation name glob.")
    fields: Absent[tuple[StrictStr, ...]] = Field(None, description="GraphQL root fields.")
    tool: Annotated[StrictStr | QueryAny | None, BeforeValidator(_tool)] = Field(
        None, description="MCP tool name glob or {any: [globs]}."
    )
    params: Absent[dict[StrictStr, Any]] = Field(None, description="MCP params (open map).")


class L7AllowRule(_Closed):
    """An entry of ``rules``: ``{allow: matcher}``."""

    allow: Absent[L7Matcher] = None


# ---------------------------------------------------------------------------------------
# Endpoint options


class McpOptions(_Closed):
    max_body_bytes: Absent[U32] = None
    strict_tool_names: Absent[StrictBool] = None
    allow_all_known_mcp_methods: Absent[StrictBool] = None
    versions: Absent[tuple[StrictStr, ...]] = None


class JsonRpcOptions(_Closed):
    max_body_bytes: Absent[U32] = None


class CredentialBinding(_Closed):
    provider: StrictStr


class GraphqlPersistedQuery(_Closed):
    operation_type: StrictStr
    operation_name: Absent[StrictStr] = None
    fields: Absent[tuple[StrictStr, ...]] = None


class EndpointSection(_Closed):
    """One endpoint of a ``network_policies`` rule."""

    host: Absent[StrictStr] = Field(None, description="DNS name, IP literal or host glob.")
    port: Absent[Port] = Field(None, description="Single port (0 = unset).")
    ports: tuple[Port, ...] = Field((), description="Ports; replaces port when non-empty.")
    path: Absent[StrictStr] = Field(None, description="Endpoint selector path.")
    allowed_ips: tuple[StrictStr, ...] = Field(
        (), description="CIDRs or IPs that resolved addresses must fall in."
    )
    protocol: Absent[StrictStr] = Field(
        None, description="'' / tcp (L4), rest, websocket, graphql, mcp, json-rpc or sql."
    )
    tls: Absent[StrictStr] = None
    enforcement: Absent[StrictStr] = Field(None, description="enforce or audit.")
    access: Absent[StrictStr] = Field(None, description="read-only, read-write or full.")
    rules: tuple[L7AllowRule, ...] = Field((), description="Allow rules: [{allow: ...}].")
    deny_rules: tuple[L7Matcher, ...] = Field((), description="Deny matchers.")
    allow_encoded_slash: Absent[StrictBool] = None
    allow_uninspected_credentials: Absent[StrictBool] = None
    websocket_credential_rewrite: Absent[StrictBool] = None
    request_body_credential_rewrite: Absent[StrictBool] = None
    credential_signing: Absent[StrictStr] = None
    signing_service: Absent[StrictStr] = None
    signing_region: Absent[StrictStr] = None
    credential_binding: Absent[CredentialBinding] = None
    persisted_queries: Absent[StrictStr] = None
    graphql_persisted_queries: Absent[dict[StrictStr, GraphqlPersistedQuery]] = None
    graphql_max_body_bytes: Absent[U32] = None
    json_rpc: Absent[JsonRpcOptions] = None
    mcp: Absent[McpOptions] = Field(None, description="Only valid with protocol mcp.")

    @model_validator(mode="after")
    def _mcp_only_for_mcp(self, info: ValidationInfo) -> EndpointSection:
        # In the mainline reading the runtime's validator decides (it refuses only the
        # options that set the proto's ``mcp``, beside a protocol other than ``mcp``).
        if mainline(info):
            return self
        if self.mcp is not None and (self.protocol or "").lower() != "mcp":
            raise fail(("field '", "' (mcp options) is only valid for protocol mcp"), "mcp")
        return self

    @model_validator(mode="after")
    def _no_explicit_empty_lists(self) -> EndpointSection:
        # An explicit empty list reads like "no rules" but the runtime validator refuses
        # it (policy-schema §8 item 10), whatever the protocol: an empty allow list would
        # deny everything, an empty deny list does nothing.
        if "rules" in self.model_fields_set and not self.rules:
            raise fail(
                (
                    "field '",
                    "' must not be an empty list: rules list cannot be empty (would "
                    "deny all traffic). Use `access: full` or remove rules.",
                ),
                "rules",
            )
        if "deny_rules" in self.model_fields_set and not self.deny_rules:
            raise fail(
                (
                    "field '",
                    "' must not be an empty list: deny_rules list cannot be empty "
                    "(would have no effect). Remove it if no denials are needed.",
                ),
                "deny_rules",
            )
        return self


class BinarySection(_Closed):
    path: StrictStr = Field(description="Absolute executable path or path glob.")


class NetworkRuleSection(_Closed):
    """A ``network_policies`` entry: every binary may reach every endpoint."""

    name: Absent[StrictStr] = Field(None, description="Display name; defaults to the key.")
    endpoints: tuple[EndpointSection, ...] = ()
    binaries: tuple[BinarySection, ...] = ()


class MiddlewareEndpoints(_Closed):
    include: tuple[StrictStr, ...] = ()
    exclude: tuple[StrictStr, ...] = ()


class MiddlewareSection(_Closed):
    name: Absent[StrictStr] = None
    middleware: StrictStr
    order: Absent[I32] = None
    config: Absent[dict[StrictStr, Any]] = Field(None, description="Middleware-owned data.")
    on_error: Absent[StrictStr] = Field(
        None, json_schema_extra={"enum": ["fail_closed", "fail_open"]}
    )
    endpoints: Absent[MiddlewareEndpoints] = None

    @field_validator("on_error", mode="after")
    @classmethod
    def _failure_mode(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Mainline parses any string and its validator refuses the others (an empty one
        # is fail_closed): prover.runtime.middleware_validation.
        if value is None or value in ("fail_closed", "fail_open") or mainline(info):
            return value
        shown = value if len(value) <= 80 else value[:80] + "..."
        raise fail(
            ("field '", f"' must be 'fail_closed' or 'fail_open' (got the string {shown!r})")
        )


# ---------------------------------------------------------------------------------------
# Top level


class InferenceSection(_Closed):
    """Legacy ``inference`` section of older OpenShell releases: the inference routes the
    sandbox may use. Read by default (policies written for those releases still run
    there); the reference reading refuses it as an unknown field."""

    allowed_routes: tuple[StrictStr, ...] = Field((), description="Route names, e.g. local.")
    allowed_routing_hints: tuple[StrictStr, ...] = Field(
        (), description="The same list under its earlier name (the navigator releases)."
    )


class AuthoredPolicy(_Closed):
    """An authored OpenShell sandbox policy document."""

    model_config = ConfigDict(title="OpenShell authored sandbox policy")

    version: Literal[1] = Field(description="Policy format version; must be 1.")
    cedar_policy: Absent[StrictStr] = None
    filesystem_policy: Absent[FilesystemPolicySection] = None
    landlock: Absent[LandlockSection] = None
    process: Absent[ProcessSection] = None
    network_policies: dict[StrictStr, NetworkRuleSection] = Field(
        default_factory=dict, description="Rule key -> rule (default deny)."
    )
    network_middlewares: dict[StrictStr, MiddlewareSection] = Field(default_factory=dict)
    inference: Absent[InferenceSection] = None

    @model_validator(mode="before")
    @classmethod
    def _version_first(cls, data: object) -> object:
        """The version decides the format, so it is checked before any other field."""
        if not isinstance(data, dict):
            return data
        if "version" not in data:
            raise fail(("missing required field '", "' (expected version: 1)"), "version")
        version = data["version"]
        if version is None:
            raise fail(("field '", "' must not be null"), "version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise fail(("field '", "' must be an integer (expected version: 1)"), "version")
        if version != POLICY_VERSION:
            raise fail(f"unsupported policy version {version}; expected version 1", "version")
        return data


def _drop_null(node: object) -> object:
    """Remove the ``null`` alternative of optional fields (an explicit null is invalid)."""
    if isinstance(node, list):
        return [_drop_null(item) for item in node]
    if not isinstance(node, dict):
        return node
    result = {key: _drop_null(value) for key, value in node.items()}
    options = result.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        kept = [option for option in options if option != {"type": "null"}]
        del result["anyOf"]
        if len(kept) == 1 and isinstance(kept[0], dict):
            result = {**kept[0], **result}
        else:
            result["anyOf"] = kept
    if result.get("default", 0) is None:
        del result["default"]
    return result


def policy_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the authored policy format."""
    schema = _drop_null(AuthoredPolicy.model_json_schema())
    assert isinstance(schema, dict)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}

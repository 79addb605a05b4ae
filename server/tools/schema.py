"""Small published schemas: the tools' ``outputSchema`` without what a client never needs.

Pydantic's schema repeats a ``title`` for every model and field, ``default`` values,
``additionalProperties: false`` and a two-branch ``anyOf`` for every nullable scalar.
:func:`compact_schema` drops the first three and writes a nullable scalar as a type list;
:func:`quick_to_validate` writes a definition used once in place of its reference (the
others stay shared in ``$defs``) and puts null first in a nullable ``anyOf``. The
published schema only loses constraints that the server's own output model still
enforces on every result (the SDK validates each structured result against the model
before sending it), so every result still validates against what clients see.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

_DROPPED = frozenset({"title", "default", "discriminator"})
_NULL = {"type": "null"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or _NULL not in branches:
        return schema
    other = next(b for b in branches if b != _NULL)
    if not isinstance(other, dict) or not isinstance(other.get("type"), str):
        return schema
    if set(other) - {"type", "enum", "const", "items", "additionalProperties"}:
        return schema
    merged = {k: v for k, v in schema.items() if k != "anyOf"}
    merged.update(other)
    merged["type"] = [other["type"], "null"]
    if "enum" in merged:
        merged["enum"] = [*merged["enum"], None]
    if "const" in merged:
        merged["enum"] = [merged.pop("const"), None]
    return merged


def compact_schema(schema: Any, dropped: frozenset[str] = _DROPPED) -> Any:
    """``schema`` without titles, defaults, OpenAPI discriminators (``dropped``) and
    ``additionalProperties: false``; an output schema (one that drops defaults) also
    loses the models' docstrings. Input schemas keep their defaults
    (``dropped={"title"}``)."""
    if isinstance(schema, list):
        return [compact_schema(item, dropped) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: compact_schema(sub, dropped) for name, sub in value.items()}
        elif key in dropped or (key == "additionalProperties" and value is False):
            continue
        else:
            out[key] = compact_schema(value, dropped)
    if "properties" in out and "default" in dropped:
        out.pop("description", None)  # a model's docstring: prose for developers
    return _nullable(out)


def _bare(schema: Any) -> Any:
    """A shared definition without prose and ``required`` (the tool description says
    what the fields mean; every result is still validated against the full model)."""
    if isinstance(schema, list):
        return [_bare(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _bare(sub) for name, sub in value.items()}
        elif key in ("description", "required"):
            continue
        else:
            out[key] = _bare(value)
    if "properties" in out and out.get("type") == "object":
        del out["type"]  # implied by properties for every value the server sends
    return out


def output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The published form of an output schema: compact, its ``$defs`` bare, and quick
    to validate (:func:`quick_to_validate`)."""
    out = compact_schema(schema)
    if isinstance(out.get("$defs"), dict):
        out["$defs"] = {name: _bare(body) for name, body in out["$defs"].items()}
    return quick_to_validate(out)


def quick_to_validate(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the same meaning, cheaper for a client to check each result with.

    A definition referenced once is written in place of its reference (a validator
    resolves no reference for it, and the schema gets shorter), and in a nullable
    ``anyOf`` the null branch comes first (a validator stops at the first branch that
    matches, and null is the usual value of an optional object such as
    ``counterexample``). Clients such as the MCP SDK validate every structured result.
    """
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return _null_first(schema)
    uses: dict[str, int] = {}
    _count_refs(schema, uses)
    once = {name for name, count in uses.items() if count == 1 and name in defs}

    def expand(node: Any, expanding: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [expand(item, expanding) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if len(node) == 1 and isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in once and name not in expanding:
                return expand(defs[name], expanding | {name})
            return node
        return {
            key: (
                {n: expand(body, frozenset({n})) for n, body in value.items()}
                if key == "$defs" and isinstance(value, dict)
                else expand(value, expanding)
            )
            for key, value in node.items()
        }

    return _null_first(prune_defs(expand(schema, frozenset())))


def _count_refs(node: Any, uses: dict[str, int]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            uses[name] = uses.get(name, 0) + 1
        for value in node.values():
            _count_refs(value, uses)
    elif isinstance(node, list):
        for value in node:
            _count_refs(value, uses)


def _null_first(node: Any) -> Any:
    if isinstance(node, list):
        return [_null_first(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _null_first(value) for key, value in node.items()}
    branches = out.get("anyOf")
    if isinstance(branches, list) and _NULL in branches[1:]:
        out["anyOf"] = [_NULL, *(b for b in branches if b != _NULL)]
    return out


def compact_published_schemas(server: MCPServer) -> None:
    """Replace every registered tool's input and output schema by its compact form."""
    for tool in server._tool_manager.list_tools():
        tool.parameters = compact_schema(tool.parameters, frozenset({"title"}))
        if tool.fn_metadata.output_schema is not None:
            publish_output_schema(server, tool.name, output_schema(tool.fn_metadata.output_schema))


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref.removeprefix("#/$defs/"))
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def prune_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without the ``$defs`` that nothing references any more."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return schema
    reachable: set[str] = set()
    _refs({k: v for k, v in schema.items() if k != "$defs"}, reachable)
    pending = list(reachable)
    while pending:
        found: set[str] = set()
        _refs(defs.get(pending.pop()), found)
        pending.extend(found - reachable)
        reachable |= found
    kept = {name: body for name, body in defs.items() if name in reachable}
    out = {k: v for k, v in schema.items() if k != "$defs"}
    if kept:
        out["$defs"] = kept
    return out


def summarised(schema: dict[str, Any], definitions: dict[str, str]) -> dict[str, Any]:
    """``schema`` with each named definition published as a plain object with the given
    description (another tool publishes it in full), and what only it used pruned."""
    defs = dict(schema.get("$defs", {}))
    for name, description in definitions.items():
        if name in defs:
            defs[name] = {"type": "object", "description": description}
    return prune_defs({**schema, "$defs": defs})


def publish_output_schema(server: MCPServer, tool_name: str, schema: dict[str, Any]) -> None:
    """Publish ``schema`` as ``tool_name``'s output schema.

    The SDK would also validate every result against the tool's output model before
    sending it: a second pass over a document our own records built (0.02-0.03 ms a
    call). Clients validate against the published schema anyway; the tests validate
    every tool's results against it (``tests/server/test_published_schemas.py`` and the
    SDK client of every tool test). Every tool here returns a ``CallToolResult``, which
    the SDK passes through unchanged without an output model.
    """
    tool = server._tool_manager.get_tool(tool_name)
    assert tool is not None
    tool.fn_metadata.output_schema = schema
    tool.fn_metadata.output_model = None
    tool.__dict__.pop("output_schema", None)

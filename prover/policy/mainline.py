"""What the mainline OpenShell parser accepts beyond, or refuses within, the strict schema.

The runtime reads policies with ``serde_yml`` into the structs of
``openshell-policy/src/lib.rs`` (``PolicyFile`` and below, ``deny_unknown_fields``
throughout; ``parse_sandbox_policy``, OpenShell 2f7fb65). It runs policies that the
stricter (unmerged) schema crate refuses, and refuses some the schema reads. Both kinds of
mismatch are wrong answers, so the default reading rewrites the raw data into the strict
form before validation:

* a top-level section that is ``null`` (``filesystem_policy: null`` or
  ``network_policies:`` followed only by a comment) is absent: the map sections become
  empty maps, the others are dropped;
* an unquoted numeric ``run_as_user``/``run_as_group`` (``1000``) is the string
  ``"1000"`` (the runtime reads the scalar's text);
* the deprecated ``binaries[].harness`` flag (kept by the runtime for backward
  compatibility and ignored) is dropped when it is a boolean;
* ``landlock.compatibility`` other than ``hard_requirement`` is ``best_effort``: the
  runtime compares with that one string and treats anything else as best effort
  (``openshell-core/src/policy.rs``, ``LandlockPolicy`` from the proto);
* an explicit empty ``rules: []`` / ``deny_rules: []`` is absent (an empty ``Vec``);

and :func:`mainline_unknown_fields` names the fields the schema reads but the parser
refuses: the legacy top-level ``inference`` section and ``cedar_policy``, an MCP
``versions`` option and a ``{glob: ...}`` query matcher. Earlier releases' section name
``filesystem`` and the list form of ``network_middlewares`` are refused by the parser
too, and the strict schema refuses them as it is.

The reference reading (``--reference-semantics``) skips this and stays strict.
"""

from __future__ import annotations

from collections.abc import Iterator

from prover.policy.paths import Location, render_path

_OPTIONAL_SECTIONS = ("filesystem_policy", "landlock", "process")
_MAP_SECTIONS = ("network_policies", "network_middlewares")
_UNKNOWN_TOP = ("cedar_policy", "inference")


def mainline_data(data: object) -> object:
    """``data`` rewritten to the strict form where mainline reads it more leniently.

    Anything this does not recognise is returned unchanged, so the strict schema still
    reports it with its exact path.
    """
    if not isinstance(data, dict):
        return data
    result = dict(data)
    for key in _OPTIONAL_SECTIONS:
        if key in result and result[key] is None:
            del result[key]
    for key in _MAP_SECTIONS:
        if key in result and result[key] is None:
            result[key] = {}
    process = result.get("process")
    if isinstance(process, dict):
        result["process"] = {
            key: _numeric_identity(value) if key in ("run_as_user", "run_as_group") else value
            for key, value in process.items()
        }
    landlock = result.get("landlock")
    if isinstance(landlock, dict) and "compatibility" in landlock:
        value = landlock["compatibility"]
        if value != "hard_requirement" and not isinstance(value, dict | list):
            result["landlock"] = {**landlock, "compatibility": "best_effort"}
    rules = result.get("network_policies")
    if isinstance(rules, dict):
        result["network_policies"] = {key: _rule(rule) for key, rule in rules.items()}
    return result


def _numeric_identity(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _rule(rule: object) -> object:
    if not isinstance(rule, dict):
        return rule
    result = dict(rule)
    if isinstance(rule.get("binaries"), list):
        result["binaries"] = [
            {k: v for k, v in b.items() if not (k == "harness" and isinstance(v, bool))}
            if isinstance(b, dict)
            else b
            for b in rule["binaries"]
        ]
    if isinstance(rule.get("endpoints"), list):
        result["endpoints"] = [
            {k: v for k, v in e.items() if not (k in ("rules", "deny_rules") and v == [])}
            if isinstance(e, dict)
            else e
            for e in rule["endpoints"]
        ]
    return result


def mainline_unknown_fields(data: object) -> list[Location]:
    """The locations of the fields the strict schema reads but the mainline parser
    refuses as unknown (``deny_unknown_fields``), in document order."""
    return list(_unknown(data))


def unknown_field_message(location: Location) -> str:
    return f"unknown field '{render_path(location)}' in authored policy"


def without_fields(data: object, locations: list[Location]) -> object:
    """``data`` without the fields at ``locations`` (a ``{glob: ...}`` matcher goes
    whole), copied along the way, so that the schema can name the other problems."""
    for location in locations:
        if location[-1] == "glob":
            location = location[:-1]
        data = _without(data, location)
    return data


def _without(node: object, location: Location) -> object:
    if not location:
        return node
    head, rest = location[0], location[1:]
    if isinstance(node, dict) and isinstance(head, str) and head in node:
        copy = dict(node)
        if rest:
            copy[head] = _without(node[head], rest)
        else:
            del copy[head]
        return copy
    if isinstance(node, list) and isinstance(head, int) and head < len(node):
        copy_list = list(node)
        copy_list[head] = _without(node[head], rest) if rest else None
        return copy_list
    return node


def _unknown(data: object) -> Iterator[Location]:
    if not isinstance(data, dict):
        return
    for key in data:
        if key in _UNKNOWN_TOP:
            yield (key,)
    rules = data.get("network_policies")
    if not isinstance(rules, dict):
        return
    for key, rule in rules.items():
        endpoints = rule.get("endpoints") if isinstance(rule, dict) else None
        for index, endpoint in enumerate(endpoints if isinstance(endpoints, list) else []):
            if not isinstance(endpoint, dict):
                continue
            where: Location = ("network_policies", key, "endpoints", index)
            mcp = endpoint.get("mcp")
            if isinstance(mcp, dict) and "versions" in mcp:
                yield (*where, "mcp", "versions")
            yield from _glob_matchers(endpoint, where)


def _glob_matchers(endpoint: dict[str, object], where: Location) -> Iterator[Location]:
    matchers: list[tuple[Location, object]] = []
    for index, rule in enumerate(_list(endpoint.get("rules"))):
        if isinstance(rule, dict):
            matchers.append(((*where, "rules", index, "allow"), rule.get("allow")))
    for index, deny in enumerate(_list(endpoint.get("deny_rules"))):
        matchers.append(((*where, "deny_rules", index), deny))
    for location, matcher in matchers:
        query = matcher.get("query") if isinstance(matcher, dict) else None
        for name, value in (query or {}).items() if isinstance(query, dict) else ():
            if isinstance(value, dict) and "glob" in value:
                yield (*location, "query", name, "glob")


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []

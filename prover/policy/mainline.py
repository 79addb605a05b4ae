"""What the mainline OpenShell parser accepts beyond the strict schema.

The runtime reads policies with ``serde_yml`` into structs whose sections are
``Option``/``BTreeMap`` fields with ``#[serde(default)]`` and whose scalars are read
lazily, so it runs policies that the stricter (unmerged) schema crate refuses. Refusing
those is a false reject, so the default reading rewrites the raw data into the strict
form before validation:

* a top-level section that is ``null`` (``filesystem_policy: null`` or
  ``network_policies:`` followed only by a comment) is absent: the map sections become
  empty maps, the others are dropped;
* an unquoted numeric ``run_as_user``/``run_as_group`` (``1000``) is the string
  ``"1000"`` (the runtime reads the scalar's text);
* the deprecated ``binaries[].harness`` flag (kept by the runtime for backward
  compatibility and ignored) is dropped when it is a boolean;
* the first releases' name of the filesystem section, ``filesystem`` (their parser,
  ``DevSandboxPolicyFile`` in navigator-cli, with ``inference.allowed_routing_hints``),
  is ``filesystem_policy`` when that is absent;
* ``network_middlewares`` written as a list of entries with unique ``name`` fields (the
  form mainline read before it became a map keyed by name) is that map, each entry's
  list position kept as its ``order`` where it has none and there are several.

The reference reading (``--reference-semantics``) skips this and stays strict.
"""

from __future__ import annotations

_OPTIONAL_SECTIONS = ("filesystem_policy", "landlock", "process", "inference")
_MAP_SECTIONS = ("network_policies", "network_middlewares")


def mainline_data(data: object) -> object:
    """``data`` rewritten to the strict form where mainline reads it more leniently.

    Anything this does not recognise is returned unchanged, so the strict schema still
    reports it with its exact path.
    """
    if not isinstance(data, dict):
        return data
    result = dict(data)
    if "filesystem" in result and "filesystem_policy" not in result:
        result["filesystem_policy"] = result.pop("filesystem")
    middlewares = result.get("network_middlewares")
    if isinstance(middlewares, list):
        result["network_middlewares"] = _middleware_map(middlewares)
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
    rules = result.get("network_policies")
    if isinstance(rules, dict):
        result["network_policies"] = {key: _without_harness(rule) for key, rule in rules.items()}
    return result


def _numeric_identity(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _without_harness(rule: object) -> object:
    if not isinstance(rule, dict) or not isinstance(rule.get("binaries"), list):
        return rule
    binaries = [
        {k: v for k, v in b.items() if not (k == "harness" and isinstance(v, bool))}
        if isinstance(b, dict)
        else b
        for b in rule["binaries"]
    ]
    return {**rule, "binaries": binaries}


def _middleware_map(entries: list[object]) -> object:
    """The list form as the map form, or the list unchanged if it cannot be keyed."""
    names = [e.get("name") if isinstance(e, dict) else None for e in entries]
    if not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        return entries
    several = len(entries) > 1
    return {
        name: {**entry, "order": position} if several and "order" not in entry else entry
        for position, (name, entry) in enumerate(zip(names, entries, strict=True))
        if isinstance(entry, dict) and isinstance(name, str)
    }

"""Authored endpoints and rules as plain data, with the defaults the reference applies.

The merge works on the authored YAML shape (field names exactly as in the schema), held
as plain ``dict``/``list`` data so that the merged policy can be written back as YAML
and re-read by the policy loader. An absent field means its default: ``""`` for
strings, ``0`` for numbers, ``[]`` for lists, ``False`` for flags (the protobuf view the
reference merges on). These helpers read fields through that lens.
"""

from __future__ import annotations

import copy
from typing import Any

# The field accessors are the runtime stage's (re-exported for the proposal modules).
from prover.runtime.data import Data as Data
from prover.runtime.data import flag as flag
from prover.runtime.data import items as items
from prover.runtime.data import number as number
from prover.runtime.data import option as option
from prover.runtime.data import ports as ports
from prover.runtime.data import rules_of as rules_of
from prover.runtime.data import text as text

PROVIDER_PREFIX = "_provider_"


def is_provider_rule(key: str) -> bool:
    return key.startswith(PROVIDER_PREFIX)


def set_ports(endpoint: Data, values: list[int]) -> None:
    """Store ports in the authored spelling (one port as ``port``, several as ``ports``),
    right after ``host`` so that written YAML reads naturally."""
    entry: Data = {}
    if len(values) == 1:
        entry = {"port": values[0]}
    elif values:
        entry = {"ports": list(values)}
    rest = [(k, v) for k, v in endpoint.items() if k not in ("port", "ports")]
    endpoint.clear()
    if not any(key == "host" for key, _ in rest):
        endpoint.update(entry)
    for key, value in rest:
        endpoint[key] = value
        if key == "host":
            endpoint.update(entry)


def dedup(values: list[Any]) -> list[Any]:
    result: list[Any] = []
    for value in values:
        if value not in result:
            result.append(value)
    return result


def normalize_endpoint(endpoint: Data) -> None:
    """The reference's ``normalize_endpoint``: sorted unique ports, unique list entries."""
    set_ports(endpoint, sorted(set(ports(endpoint))))
    for field in ("allowed_ips", "rules", "deny_rules"):
        if field in endpoint:
            endpoint[field] = dedup(items(endpoint, field))


def binary_paths(rule: Data) -> list[str]:
    paths: list[str] = []
    for binary in items(rule, "binaries"):
        path = binary.get("path") if isinstance(binary, dict) else None
        if isinstance(path, str):
            paths.append(path)
    return paths


def normalize_rule(rule: Data) -> None:
    """Normalise every endpoint and drop repeated binaries (first one wins)."""
    for endpoint in items(rule, "endpoints"):
        normalize_endpoint(endpoint)
    seen: set[str] = set()
    kept: list[Any] = []
    for binary in items(rule, "binaries"):
        path = binary.get("path")
        if path not in seen:
            seen.add(path)
            kept.append(binary)
    if "binaries" in rule:
        rule["binaries"] = kept


def protocol(endpoint: Data) -> str:
    return text(endpoint, "protocol")


def is_mcp(endpoint: Data) -> bool:
    return protocol(endpoint).lower() == "mcp"


def json_rpc_max_body(endpoint: Data) -> int:
    """The JSON-RPC-family body limit: ``mcp.max_body_bytes`` or ``json_rpc.max_body_bytes``."""
    for section in ("mcp", "json_rpc"):
        value = option(endpoint, section, "max_body_bytes")
        if isinstance(value, int) and not isinstance(value, bool) and value:
            return value
    return 0


def effective_tls(value: str) -> str:
    return "auto" if value in ("", "terminate", "passthrough") else value


def effective_enforcement(value: str) -> str:
    return value or "audit"


def clean(data: Any) -> Any:
    """Drop ``None`` values and empty lists recursively (absent == empty in the schema).

    Empty mappings are kept: an empty ``filesystem_policy: {}`` is not the same as an
    absent one (``include_workdir`` defaults differ). The open maps (middleware
    ``config``, MCP ``params``) are user data and kept as they are.
    """
    if isinstance(data, dict):
        result = {}
        for key, value in data.items():
            cleaned = value if key in ("config", "params") else clean(value)
            if cleaned is None or (isinstance(cleaned, list) and not cleaned):
                continue
            result[key] = cleaned
        return result
    if isinstance(data, list | tuple):
        return [clean(value) for value in data]
    return data


def clone(data: Data) -> Data:
    return copy.deepcopy(data)

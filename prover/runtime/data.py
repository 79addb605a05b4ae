"""Authored policy data read through the runtime's defaults.

A policy is held as plain ``dict``/``list`` data with the field names of the YAML
schema. An absent field means its protobuf default, as the runtime reads it: ``""`` for
strings, ``0`` for numbers, ``[]`` for lists, ``False`` for flags. These helpers read
fields through that lens (the validator, the ambiguity check and the proposal merge).
"""

from __future__ import annotations

from typing import Any

Data = dict[str, Any]


def text(endpoint: Data, field: str) -> str:
    value = endpoint.get(field)
    return value if isinstance(value, str) else ""


def flag(endpoint: Data, field: str) -> bool:
    return endpoint.get(field) is True


def items(endpoint: Data, field: str) -> list[Any]:
    value = endpoint.get(field)
    return list(value) if isinstance(value, list | tuple) else []


def number(endpoint: Data, field: str) -> int:
    value = endpoint.get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def ports(endpoint: Data) -> list[int]:
    """Effective ports: ``ports`` if non-empty, else ``[port]`` if set, else none."""
    listed = [p for p in items(endpoint, "ports") if isinstance(p, int)]
    if listed:
        return listed
    single = number(endpoint, "port")
    return [single] if single > 0 else []


def option(endpoint: Data, section: str, field: str) -> Any:
    block = endpoint.get(section)
    return block.get(field) if isinstance(block, dict) else None


def rules_of(policy: Data) -> list[tuple[str, Data]]:
    """``network_policies`` entries sorted by key (the order every analysis walks)."""
    rules = policy.get("network_policies")
    if not isinstance(rules, dict):
        return []
    return sorted((key, rule) for key, rule in rules.items() if isinstance(rule, dict))

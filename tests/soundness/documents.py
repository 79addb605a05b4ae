"""Accessors over authored policy documents (plain dicts), shared by the mutations.

A mutation edits a document in place and returns a short label, or ``None`` when the
document has nothing it applies to.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from tests.soundness.generator import Document, Plan

Operation = Callable[[Document, Plan, random.Random], str | None]


def rules_of(doc: Document) -> dict[str, Document]:
    return doc.setdefault("network_policies", {})


def endpoints_of(doc: Document) -> list[tuple[str, Document]]:
    return [(key, ep) for key, r in rules_of(doc).items() for ep in r.get("endpoints", [])]


def is_rest(ep: Document) -> bool:
    return str(ep.get("protocol", "")).lower() == "rest"


def ports_of(ep: Document) -> list[int]:
    return list(ep.get("ports") or ([ep["port"]] if ep.get("port") else []))


def allow_matchers(doc: Document) -> list[dict[str, Any]]:
    return [
        entry["allow"]
        for _, ep in endpoints_of(doc)
        for entry in ep.get("rules", [])
        if isinstance(entry.get("allow"), dict)
    ]


def has_denies(r: Document) -> bool:
    return any(ep.get("deny_rules") for ep in r.get("endpoints", []))


def choice(rng: random.Random, items: list[Any]) -> Any | None:
    return rng.choice(items) if items else None


def section(doc: Document, key: str) -> Document:
    value = doc.get(key)
    if not isinstance(value, dict):
        value = {}
        doc[key] = value
    return value


def replace_ips(doc: Document, old: list[str], new: list[str]) -> None:
    """Change one ``allowed_ips`` list everywhere, so overlapping endpoints still agree."""
    for _, ep in endpoints_of(doc):
        if ep.get("allowed_ips") == old:
            if new:
                ep["allowed_ips"] = list(new)
            else:
                del ep["allowed_ips"]


def ip_lists(doc: Document) -> list[list[str]]:
    lists: list[list[str]] = []
    for _, ep in endpoints_of(doc):
        ips = ep.get("allowed_ips")
        if ips and ips not in lists:
            lists.append(ips)
    return lists


def apply(
    doc: Document, plan: Plan, rng: random.Random, operations: tuple[Operation, ...]
) -> str | None:
    """Apply one applicable operation drawn from ``operations`` (a few tries)."""
    for _ in range(6):
        label = rng.choice(operations)(doc, plan, rng)
        if label is not None:
            return label
    return None

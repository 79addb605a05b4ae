"""Narrowings and widenings of a real policy, with the verdict each must get.

A narrowing removes one REST allow rule (from an endpoint with more than one) or one
filesystem path: the result allows less, so it must be within the original. A widening
adds a new host on a new port, or a new writable path: it must exceed the original,
unless the original already allows that path (a writable ``/``).

Where the runtime reads the text otherwise, so does the expectation (the sandbox's own
rules, independent of ``prover/``): a policy whose lists are empty, with no workdir and
no network rules, runs without Landlock (landlock.rs ``prepare_with_path_open_mode``),
so removing its last path widens it and adding a path to one narrows it; removing a
read-only ``/tmp`` from a policy with network rules lets the proxy baseline add it
read-write (lib.rs ``enrich_proto_baseline_paths``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from prover.explain.document import dump_text
from prover.policy.reader import read_policy_data

NEW_HOST = "widening-probe.example.invalid"
NEW_PORT = 47123
NEW_PATH = "/widening-probe"


@dataclass(frozen=True)
class Variant:
    kind: str  # "narrowing" or "widening"
    what: str
    text: str
    expected: str  # "within_boundary" or "exceeds_boundary"


def variants(text: str) -> Iterator[Variant]:
    data = read_policy_data(text)
    if not isinstance(data, dict):
        return
    yield from _narrowings(data)
    yield from _widenings(data)


def _rest_rule_removal(data: dict[str, Any]) -> Variant | None:
    for key, rule in (data.get("network_policies") or {}).items():
        for index, endpoint in enumerate((rule or {}).get("endpoints") or []):
            rules = endpoint.get("rules") if isinstance(endpoint, dict) else None
            if str(endpoint.get("protocol", "")).lower() == "rest" and rules and len(rules) > 1:
                changed = copy.deepcopy(data)
                changed["network_policies"][key]["endpoints"][index]["rules"] = rules[:-1]
                what = f"remove the last allow rule of {key}.endpoints[{index}]"
                return Variant("narrowing", what, dump_text(changed), "within_boundary")
    return None


def _filesystem_key(data: dict[str, Any]) -> str:
    """The first releases named the section ``filesystem``."""
    return (
        "filesystem"
        if "filesystem" in data and "filesystem_policy" not in data
        else "filesystem_policy"
    )


def _without_landlock(data: dict[str, Any]) -> bool:
    """The runtime builds no Landlock ruleset: no path, no workdir, no baseline paths."""
    section = data.get(_filesystem_key(data))
    if not isinstance(section, dict) or data.get("network_policies"):
        return False
    listed = section.get("read_only") or section.get("read_write")
    return not listed and not section.get("include_workdir")


def _path_removal(data: dict[str, Any]) -> Variant | None:
    name = _filesystem_key(data)
    section = data.get(name)
    if not isinstance(section, dict):
        return None
    for field in ("read_only", "read_write"):
        paths = section.get(field)
        if paths:
            changed = copy.deepcopy(data)
            changed[name][field] = paths[:-1]
            what = f"remove {name}.{field}[-1]"
            widens = _without_landlock(changed) or (
                field == "read_only"
                and paths[-1] == "/tmp"
                and bool(data.get("network_policies"))
                and "/tmp" not in (section.get("read_write") or [])
            )
            expected = "exceeds_boundary" if widens else "within_boundary"
            return Variant("narrowing", what, dump_text(changed), expected)
    return None


def _narrowings(data: dict[str, Any]) -> Iterator[Variant]:
    for make in (_rest_rule_removal, _path_removal):
        variant = make(data)
        if variant is not None:
            yield variant


def _widenings(data: dict[str, Any]) -> Iterator[Variant]:
    changed = copy.deepcopy(data)
    rules = changed.get("network_policies") or {}
    rules["widening_probe"] = {
        "endpoints": [{"host": NEW_HOST, "port": NEW_PORT}],
        "binaries": [{"path": "/usr/bin/curl"}],
    }
    changed["network_policies"] = rules
    yield Variant(
        "widening", "add a new host on a new port", dump_text(changed), "exceeds_boundary"
    )

    changed = copy.deepcopy(data)
    name = _filesystem_key(changed)
    section = changed.get(name)
    if not isinstance(section, dict):
        # An absent section includes the working directory: keep that when adding one.
        section = {"include_workdir": True}
    writable = list(section.get("read_write") or [])
    unrestricted = "/" in writable or _without_landlock(changed)
    expected = "within_boundary" if unrestricted else "exceeds_boundary"
    section["read_write"] = [*writable, NEW_PATH]
    changed[name] = section
    yield Variant("widening", "add a new writable path", dump_text(changed), expected)

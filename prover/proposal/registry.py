"""The binary capability registry (spec §8) and the per-binary facts of spec §3.4.

The shipped registry is package data (``prover/data/registry/binaries/*.yaml``, one
descriptor per binary, the reference's format). A caller may pass an override document
whose entries replace shipped entries with the same ``binary`` path and add new ones.

Descriptor fields: ``binary`` (path or glob), ``description``, ``protocols[]`` (``name``,
``transport``, ``description``, ``bypasses_l7``, ``actions[]`` of ``{name, type:
read|write|destructive, description}``), ``spawns[]``, ``can_exfiltrate``,
``exfil_mechanism``, ``can_construct_http``. Omitted flags are ``false`` as in the
reference. Descriptors are closed: a misspelt flag is an error rather than a silent
``false``.

Lookup of a policy binary path (reference ``get_or_unknown``): the exact registry entry;
else the first registry entry (in path order) whose path contains ``*`` and glob-matches
the policy path; else the *unknown* binary (exfiltrates, builds HTTP, does not bypass L7).

Divergence (flagged): a policy binary that is itself a glob (``/usr/bin/*``) is looked up
by the reference as a literal path and so modelled as unknown, although at run time it
admits ``/usr/bin/git`` or ``/usr/bin/nc``. Here it gets the union of the capabilities of
every registry entry it can match plus the unknown binary's, so a glob that covers an
L7-bypassing binary bypasses L7.

``spawns`` is informational, as in the reference: no transitive reasoning.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr

from prover.errors import ProposalError
from prover.proposal.fields import parse_model
from prover.proposal.reading import read_document

SHIPPED_REGISTRY = Path(__file__).resolve().parent.parent / "data" / "registry" / "binaries"
UNKNOWN_DESCRIPTION = "Unknown binary — not in registry"
_GLOB_CHARS = frozenset("*?[")


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BinaryAction(_Closed):
    name: StrictStr = ""
    type: Literal["read", "write", "destructive"] = "read"
    description: StrictStr = ""


class BinaryProtocol(_Closed):
    name: StrictStr = ""
    transport: StrictStr = ""
    description: StrictStr = ""
    bypasses_l7: StrictBool = False
    actions: tuple[BinaryAction, ...] = ()


class BinaryCapability(_Closed):
    """What a binary can do on the network, as the reachability model reads it."""

    binary: StrictStr
    description: StrictStr = ""
    protocols: tuple[BinaryProtocol, ...] = ()
    spawns: tuple[StrictStr, ...] = ()
    can_exfiltrate: StrictBool = False
    exfil_mechanism: StrictStr = ""
    can_construct_http: StrictBool = False

    @property
    def bypasses_l7(self) -> bool:
        return any(protocol.bypasses_l7 for protocol in self.protocols)


def unknown_binary(path: str) -> BinaryCapability:
    return BinaryCapability(
        binary=path,
        description=UNKNOWN_DESCRIPTION,
        can_exfiltrate=True,
        can_construct_http=True,
    )


def _is_glob(path: str) -> bool:
    return bool(set(path) & _GLOB_CHARS)


@dataclass(frozen=True)
class BinaryRegistry:
    """Registry entries by ``binary`` path."""

    entries: dict[str, BinaryCapability] = field(default_factory=dict)

    def lookup(self, path: str) -> BinaryCapability:
        exact = self.entries.get(path)
        if exact is not None:
            return exact
        for registry_path in sorted(self.entries):
            if "*" in registry_path and fnmatch.fnmatchcase(path, registry_path):
                return self.entries[registry_path]
        if _is_glob(path):
            return self._glob_union(path)
        return unknown_binary(path)

    def _glob_union(self, pattern: str) -> BinaryCapability:
        """A policy glob may run any binary it matches: join their capabilities.

        ``fnmatch`` lets ``*`` cross ``/``, a superset of the runtime's binary globs,
        so the union can only be wider than the binaries the glob really admits.
        """
        matched = [
            capability
            for registry_path, capability in sorted(self.entries.items())
            if not _is_glob(registry_path) and fnmatch.fnmatchcase(registry_path, pattern)
        ]
        if not matched:
            return unknown_binary(pattern)
        names = ", ".join(capability.binary for capability in matched)
        return BinaryCapability(
            binary=pattern,
            description=f"Binary pattern matching registry binaries {names} or unknown ones",
            protocols=tuple(p for capability in matched for p in capability.protocols),
            can_exfiltrate=True,
            can_construct_http=True,
        )


@cache
def _shipped_entries() -> tuple[BinaryCapability, ...]:
    entries: list[BinaryCapability] = []
    for item in sorted(SHIPPED_REGISTRY.glob("*.yaml")):
        if item.is_file():
            what = f"shipped registry file {item.name}"
            entries.append(
                parse_model(BinaryCapability, read_document(item.read_bytes(), what), what)
            )
    return tuple(entries)


def _override_entries(data: object) -> list[object]:
    if isinstance(data, dict) and "binaries" in data:
        if set(data) != {"binaries"}:
            extra = sorted(set(data) - {"binaries"})[0]
            raise ProposalError(f"registry field '{extra}': unknown field")
        listed = data["binaries"]
        if not isinstance(listed, list):
            raise ProposalError("registry field 'binaries': expected a list of descriptors")
        return listed
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        return data
    raise ProposalError(
        "registry: expected a binary descriptor, a list of them, or {binaries: [...]}"
    )


def load_registry(
    override: str | bytes | None = None, checkpoint: Callable[[], None] | None = None
) -> BinaryRegistry:
    """The shipped registry, extended or overridden by ``override`` (YAML/JSON text)."""
    entries = {entry.binary: entry for entry in _shipped_entries()}
    if override is None:
        return BinaryRegistry(entries)
    data = read_document(override, "registry", checkpoint)
    listed = _override_entries(data)
    wrapped = isinstance(data, dict) and "binaries" in data
    for index, raw in enumerate(listed):
        location: tuple[str | int, ...] = ()
        if wrapped:
            location = ("binaries", index)
        elif isinstance(data, list):
            location = (index,)
        entry = parse_model(BinaryCapability, raw, "registry", location)
        if not entry.binary.strip():
            raise ProposalError("registry: a descriptor's 'binary' must not be empty")
        entries[entry.binary] = entry
    return BinaryRegistry(entries)

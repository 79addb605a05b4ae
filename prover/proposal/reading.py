"""Safe reading of the proposal's small side documents.

The proposal body, the credential set, the accepted-risks file and a registry override
are all small YAML or JSON documents. They are read here with hard limits, and every
failure becomes a :class:`~prover.errors.ProposalError` whose message names the input
(and, further down, the field). Policies are *not* read here: they go through the policy
loader.

Limits: 4 MiB of UTF-8, one document, no anchors/aliases (they are never needed in
these files and are the usual way to blow up a YAML reader), no duplicate mapping keys
and no ``<<`` merge keys.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node

from prover.errors import ProposalError

MAX_INPUT_BYTES = 4 * 1024 * 1024


class _StrictLoader(yaml.SafeLoader):
    """``SafeLoader`` without aliases, merge keys or duplicate keys."""

    def compose_node(self, parent: Node | None, index: object) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            raise ConstructorError(None, None, "aliases are not allowed", event.start_mark)
        return super().compose_node(parent, index)  # type: ignore[no-untyped-call]

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise ConstructorError(
                    None, None, "merge keys ('<<') are not allowed", key_node.start_mark
                )
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            try:
                duplicate = key in seen
            except TypeError:
                duplicate = False
            if duplicate:
                raise ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            if not isinstance(key, list | dict):
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def decode_text(data: str | bytes, what: str) -> str:
    """The input as text, enforcing the size limit; ``what`` names the input in errors."""
    if isinstance(data, bytes):
        if len(data) > MAX_INPUT_BYTES:
            raise ProposalError(f"{what}: input exceeds the {MAX_INPUT_BYTES} byte limit")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ProposalError(f"{what}: input is not valid UTF-8 (byte {error.start})") from None
    if not isinstance(data, str):
        raise ProposalError(f"{what}: expected text, got {type(data).__name__}")
    if len(data) > MAX_INPUT_BYTES or len(data.encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
        raise ProposalError(f"{what}: input exceeds the {MAX_INPUT_BYTES} byte limit")
    return data.removeprefix("\ufeff")


def read_document(data: str | bytes, what: str) -> Any:
    """Parse one YAML (or JSON) document into plain Python data."""
    text = decode_text(data, what)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass  # flow-style YAML also starts with a bracket; let YAML decide
    try:
        documents = list(yaml.load_all(text, Loader=_StrictLoader))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = error.problem or error.context or "invalid YAML"
        raise ProposalError(f"{what}: invalid YAML{where}: {problem}") from None
    except yaml.YAMLError as error:
        raise ProposalError(f"{what}: invalid YAML: {error}") from None
    except RecursionError:
        raise ProposalError(f"{what}: document is nested too deeply") from None
    except ValueError as error:  # e.g. an integer longer than Python converts
        raise ProposalError(f"{what}: {error}") from None
    if len(documents) > 1:
        raise ProposalError(f"{what}: expected one YAML document, found {len(documents)}")
    return documents[0] if documents else None

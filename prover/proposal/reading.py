"""Safe reading of the proposal's small side documents.

The proposal body, the credential set, the accepted-risks file and a registry override
are all small YAML or JSON documents. They are read here with hard limits, and every
failure becomes a :class:`~prover.errors.ProposalError` whose message names the input
(and, further down, the field). Policies are *not* read here: they go through the policy
loader.

Limits: 4 MiB of UTF-8, one document, no aliases (they are never needed in
these files and are the usual way to blow up a YAML reader), no duplicate mapping keys
and no ``<<`` merge keys, depth 64, 100,000 nodes, 10,000 items per list or mapping.

The document is read as a stream of parser events (libyaml when present) and built one
event at a time, never as PyYAML's node graph: a 4 MiB document then takes a fraction
of the memory and time of ``yaml.load``, a limit stops the read where it is broken, and
the caller's ``checkpoint`` (a budget's) runs every few thousand events so that a
deadline bounds the read too. Scalars keep PyYAML's safe-loader meaning (YAML 1.1
resolution: ``yes`` is a boolean, ``2024-01-01`` a date).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml import events
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from prover.errors import ProposalError

MAX_INPUT_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 100_000
MAX_ITEMS = 10_000
#: Events read between two calls of the caller's ``checkpoint``.
CHECKPOINT_EVERY_EVENTS = 2048

_LOADER: type[yaml.SafeLoader | yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_COLLECTION_TAGS = {
    MappingNode: (None, "!", "tag:yaml.org,2002:map"),
    SequenceNode: (None, "!", "tag:yaml.org,2002:seq"),
}


class _Refused(Exception):
    """A limit or rule broken while reading; the message is the problem."""


class _Builder:
    """Builds plain data from parser events, enforcing the limits as events arrive."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.stack: list[list[Any]] = []  # [container, pending key or _NO_KEY, keys seen]
        self.nodes = 0
        self.documents = 0
        self.root: Any = None

    def feed(self, event: events.Event) -> None:
        if isinstance(event, events.ScalarEvent):
            self._add(self._scalar(event), key_ok=True, event=event)
        elif isinstance(event, events.MappingStartEvent):
            self._open(event, MappingNode, {})
        elif isinstance(event, events.SequenceStartEvent):
            self._open(event, SequenceNode, [])
        elif isinstance(event, events.MappingEndEvent | events.SequenceEndEvent):
            container = self.stack.pop()[0]
            self._add(container, key_ok=False, event=event)
        elif isinstance(event, events.AliasEvent):
            raise _Refused(f"aliases are not allowed{_at(event)}")
        elif isinstance(event, events.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise _Refused(f"expected one YAML document, found a second one{_at(event)}")

    def _count(self, event: events.Event) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Refused(f"document has more than {MAX_NODES} nodes{_at(event)}")

    def _scalar(self, event: events.ScalarEvent) -> Any:
        self._count(event)
        node = ScalarNode(None, event.value, event.start_mark, event.end_mark, event.style)
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(ScalarNode, event.value, event.implicit)
        node.tag = tag
        if tag == _MERGE_TAG:
            raise _Refused(f"merge keys ('<<') are not allowed{_at(event)}")
        constructors = self.loader.yaml_constructors
        construct = constructors.get(tag)
        if construct is None:
            raise _Refused(f"unsupported YAML tag {tag!r}{_at(event)}")
        return construct(self.loader, node)

    def _open(self, event: Any, kind: type, container: Any) -> None:
        if event.tag not in _COLLECTION_TAGS[kind]:
            raise _Refused(f"unsupported YAML tag {event.tag!r}{_at(event)}")
        self._count(event)
        if len(self.stack) >= MAX_DEPTH:
            raise _Refused(f"document is nested too deeply (more than {MAX_DEPTH} levels)")
        if self.stack and isinstance(self.stack[-1][0], dict) and self.stack[-1][1] is _NO_KEY:
            raise _Refused(f"mapping keys must be scalars{_at(event)}")
        self.stack.append([container, _NO_KEY])

    def _add(self, value: Any, *, key_ok: bool, event: events.Event) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        container = top[0]
        if isinstance(container, list):
            if len(container) >= MAX_ITEMS:
                raise _Refused(f"a list has more than {MAX_ITEMS} items{_at(event)}")
            container.append(value)
            return
        if top[1] is _NO_KEY:
            if not key_ok:
                raise _Refused(f"mapping keys must be scalars{_at(event)}")
            try:
                duplicate = value in container
            except TypeError:
                raise _Refused(f"unhashable mapping key{_at(event)}") from None
            if duplicate:
                raise _Refused(f"duplicate key {value!r}{_at(event)}")
            if len(container) >= MAX_ITEMS:
                raise _Refused(f"a mapping has more than {MAX_ITEMS} keys{_at(event)}")
            top[1] = value
            return
        container[top[1]] = value
        top[1] = _NO_KEY


_NO_KEY = object()


def _at(event: events.Event) -> str:
    mark = event.start_mark
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


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


def read_document(
    data: str | bytes, what: str, checkpoint: Callable[[], None] | None = None
) -> Any:
    """Parse one YAML (or JSON) document into plain Python data.

    ``checkpoint`` (e.g. ``Budget.checkpoint``) is called before reading and every
    :data:`CHECKPOINT_EVERY_EVENTS` events; it may raise to stop a read that outlives
    the caller's deadline.
    """
    if checkpoint is not None:
        checkpoint()
    text = decode_text(data, what)
    builder: _Builder | None = None
    loader: Any = None
    try:
        loader = _LOADER(text)
        builder = _Builder(loader)
        count = 0
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, events.StreamEndEvent):
                break
            builder.feed(event)
            count += 1
            if checkpoint is not None and count % CHECKPOINT_EVERY_EVENTS == 0:
                checkpoint()
    except _Refused as error:
        raise ProposalError(f"{what}: {error}") from None
    except yaml.MarkedYAMLError as error:
        if error.problem == "exceeded maximum nesting depth":  # libyaml's own guard
            raise ProposalError(f"{what}: document is nested too deeply") from None
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
    finally:
        if loader is not None:
            loader.dispose()
    return builder.root if builder is not None else None

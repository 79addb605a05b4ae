"""Read policy text (YAML or JSON) into plain Python data within the reference's limits.

Why not ``yaml.safe_load``: PyYAML's composer builds the whole node graph before any
limit could be checked, resolves scalars with YAML 1.1 rules (``yes`` is a boolean,
``0443`` octal, ``1:30`` sexagesimal) and silently accepts merge keys and duplicate keys.
Here the parser's event stream is consumed one event at a time and every limit is
checked as each event arrives, so an alias bomb, a deep nesting or a huge list is refused
after reading only the part that breaks the limit, never expanded.

Data model of the result: mappings are ``dict[str, object]`` whose keys are the key
scalars' text as written (YAML 1.2 core-schema resolution applies to values only), lists
are ``list``, scalars are ``str``/``int``/``float``/``bool``/``None``. An alias yields the
same Python object as its anchor (the tree is shared, never copied); the limits on nodes,
depth and scalar bytes count every alias as the full subtree it stands for, so consumers
may walk the result as a tree without amplification.

Limits (spec boundary-check §2; the reference parser's budget): input 4 MiB, one
document, depth 64, 300,000 events, 100,000 nodes, 4 MiB of scalar text, 100 aliases,
10,000 keys per mapping and 10,000 elements per sequence, and the alias/anchor ratio
heuristic (5 aliases per anchor, evaluated once 100 aliases are used).

Fast path: a small text in the plain block style of nearly every policy is read by
:mod:`prover.policy.simple_yaml` without PyYAML's Python event objects, which alone cost
more than that whole path; it returns exactly what the composer here would, or declines,
and every declined text (so every error) is read here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import yaml
from yaml import events

from prover.errors import PolicyLoadError
from prover.policy.paths import Location, render_path
from prover.policy.scalars import _NON_STRING_STARTS, CORE_TAG, resolve_scalar, tag_error

if TYPE_CHECKING:
    from prover.policy.simple_yaml import Limits

MAX_INPUT_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_EVENTS = 300_000
MAX_NODES = 100_000
MAX_SCALAR_BYTES = 4 * 1024 * 1024
MAX_ALIASES = 100
ALIAS_ANCHOR_RATIO = 5.0
ALIAS_RATIO_MIN_ALIASES = 100
MAX_MAPPING_KEYS = 10_000
MAX_SEQUENCE_ITEMS = 10_000

UTF8_ERROR = "policy file is not valid UTF-8"
SIZE_ERROR = f"policy file exceeds the {MAX_INPUT_BYTES}-byte input limit"

# libyaml is faster and, unlike PyYAML's pure scanner, accepts tabs between JSON tokens;
# both raise the same exception types and produce the same events.
_LOADER: type[yaml.SafeLoader | yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(slots=True)
class _Anchored:
    """A completed anchored node, with the size an alias to it stands for."""

    value: object
    nodes: int
    scalar_bytes: int
    height: int
    key_text: str | None


@dataclass(slots=True)
class _Frame:
    """An open mapping or sequence.

    Its size, for an alias to it, is what the composer's totals grew by while it was
    open (``start_nodes`` and ``start_bytes`` are the totals before it): they count
    every node and scalar byte, alias expansions included, so nothing is added up per
    node and frame.
    """

    value: dict[str, object] | list[object]
    location: Location
    anchor: str | None
    start_nodes: int
    start_bytes: int
    height: int = 1
    key: str | None = None


@dataclass(slots=True)
class _Composer:
    """Turns parser events into data, enforcing every limit as events arrive."""

    stack: list[_Frame] = field(default_factory=list)
    anchors: dict[str, _Anchored] = field(default_factory=dict)
    event_count: int = 0
    nodes: int = 0
    scalar_bytes: int = 0
    aliases: int = 0
    anchor_definitions: int = 0
    documents: int = 0
    root: object = None
    root_set: bool = False

    def feed(self, event: events.Event) -> None:
        self.event_count += 1
        kind = type(event)
        # Exact types first (what both parsers produce), then isinstance for subclasses.
        # The line is computed only where it can be reported: reading it costs as much
        # as composing a plain scalar.
        if self.event_count <= MAX_EVENTS:
            if kind is _SCALAR:
                self._scalar(event)  # type: ignore[arg-type]
                return
            if kind is _MAPPING_END or kind is _SEQUENCE_END:
                self._end(event)
                return
            if kind is _MAPPING_START:
                self._start(event, {})  # type: ignore[arg-type]
                return
            if kind is _SEQUENCE_START:
                self._start(event, [])  # type: ignore[arg-type]
                return
        line = _line(event)
        if self.event_count > MAX_EVENTS:
            raise PolicyLoadError(
                f"policy exceeds the limit of {MAX_EVENTS} YAML events (line {line})"
            )
        if isinstance(event, events.ScalarEvent):
            self._scalar(event)
        elif isinstance(event, events.MappingStartEvent):
            self._start(event, {})
        elif isinstance(event, events.SequenceStartEvent):
            self._start(event, [])
        elif isinstance(event, events.MappingEndEvent | events.SequenceEndEvent):
            self._end(event)
        elif isinstance(event, events.AliasEvent):
            self._alias(event, line)
        elif isinstance(event, events.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise PolicyLoadError(
                    "policy must contain exactly one YAML document; "
                    f"a second document starts at line {line}"
                )

    def finish(self) -> object:
        if self.documents == 0 or not self.root_set:
            raise PolicyLoadError("policy is empty; expected a mapping such as 'version: 1'")
        if self.aliases >= ALIAS_RATIO_MIN_ALIASES and self.aliases > (
            ALIAS_ANCHOR_RATIO * self.anchor_definitions
        ):
            raise PolicyLoadError(
                f"policy uses {self.aliases} YAML aliases for {self.anchor_definitions} "
                f"anchors, more than the limit of {ALIAS_ANCHOR_RATIO:g} aliases per anchor"
            )
        return self.root

    # -- helpers -------------------------------------------------------------------

    def _expecting_key(self) -> bool:
        top = self.stack[-1] if self.stack else None
        return top is not None and isinstance(top.value, dict) and top.key is None

    def _child_location(self) -> Location:
        if not self.stack:
            return ()
        top = self.stack[-1]
        if isinstance(top.value, dict):
            return (*top.location, top.key) if top.key is not None else top.location
        return (*top.location, len(top.value))

    def _error(self, message: str, line: int, location: Location | None = None) -> PolicyLoadError:
        """An error at ``location`` (default: the node being read), naming line and field."""
        path = render_path(self._child_location() if location is None else location)
        where = f"line {line}, field '{path}'" if path else f"line {line}"
        return PolicyLoadError(f"{message} ({where})", path)

    def _charge(self, nodes: int, scalar_bytes: int, line: int) -> None:
        self.nodes += nodes
        if self.nodes > MAX_NODES:
            raise self._error(
                f"policy exceeds the limit of {MAX_NODES} YAML nodes, counting alias expansions",
                line,
            )
        self.scalar_bytes += scalar_bytes
        if self.scalar_bytes > MAX_SCALAR_BYTES:
            raise self._error(
                f"policy scalars exceed the limit of {MAX_SCALAR_BYTES} bytes in total, "
                "counting alias expansions",
                line,
            )

    def _check_depth(self, depth: int, line: int) -> None:
        if depth > MAX_DEPTH:
            raise PolicyLoadError(
                f"policy nesting depth exceeds the limit of {MAX_DEPTH} (line {line})"
            )

    def _define(self, anchor: str | None, entry: _Anchored) -> None:
        if anchor is not None:
            self.anchor_definitions += 1
            self.anchors[anchor] = entry

    def _attach(
        self,
        value: object,
        size: tuple[int, int, int],
        line: int,
        key_text: str | None,
        is_merge: bool = False,
    ) -> None:
        if not self.stack:
            self.root, self.root_set = value, True
            return
        top = self.stack[-1]
        height = size[2] + 1
        if height > top.height:
            top.height = height
        if isinstance(top.value, list):
            if len(top.value) >= MAX_SEQUENCE_ITEMS:
                raise self._error(
                    f"list has more than {MAX_SEQUENCE_ITEMS} elements", line, top.location
                )
            top.value.append(value)
            return
        if top.key is not None:
            top.value[top.key] = value
            top.key = None
            return
        self._key(top, key_text, line, is_merge)

    # -- events --------------------------------------------------------------------

    def _scalar(self, event: events.ScalarEvent) -> None:
        text = event.value
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        nodes, scalar_bytes = self.nodes + 1, self.scalar_bytes + size
        if nodes > MAX_NODES or scalar_bytes > MAX_SCALAR_BYTES:
            self._charge(1, size, _line(event))  # raises the limit's error
        self.nodes, self.scalar_bytes = nodes, scalar_bytes
        tag, stack = event.tag, self.stack
        if not stack:
            plain = tag is None and not event.style
            if plain and text == "":
                return  # an empty document holds no policy
            value = resolve_scalar(event, _line(event))
            if event.anchor is not None:
                self._define(event.anchor, _Anchored(value, 1, size, 0, text))
            self.root, self.root_set = value, True
            return
        top = stack[-1]
        container = top.value
        if tag is None and (event.style or (text and text[0] not in _NON_STRING_STARTS)):
            # A quoted, block or plainly textual scalar is its text, key or value (what
            # resolve_scalar answers for it, without the call).
            value: object = text
        elif tag is None and top.key is None and isinstance(container, dict):
            value = text  # keys are kept as written; only an explicit tag on a key is checked
        else:
            value = resolve_scalar(event, _line(event))
        if event.anchor is not None:
            self._define(event.anchor, _Anchored(value, 1, size, 0, text))
        # (a scalar's height is 0, so the container's height does not change)
        if type(container) is list:
            if len(container) >= MAX_SEQUENCE_ITEMS:
                raise self._error(
                    f"list has more than {MAX_SEQUENCE_ITEMS} elements",
                    _line(event),
                    top.location,
                )
            container.append(value)
        elif top.key is not None:
            container[top.key] = value  # type: ignore[index]
            top.key = None
        elif (
            text not in container
            and len(container) < MAX_MAPPING_KEYS
            and (tag is not None or event.style or text != "<<")
        ):
            top.key = text  # a new key: what _key accepts
        else:
            is_merge = tag is None and not event.style and text == "<<"
            self._key(top, text, _line(event), is_merge)

    def _key(self, top: _Frame, key_text: str | None, line: int, is_merge: bool) -> None:
        """``key_text`` becomes the pending key of the mapping ``top``."""
        container = top.value
        assert isinstance(container, dict)
        if key_text is None:
            raise self._error("mapping keys must be scalars", line, top.location)
        if is_merge:
            raise self._error("YAML merge keys ('<<') are not supported", line, top.location)
        if key_text in container:
            path = render_path((*top.location, key_text))
            raise PolicyLoadError(f"duplicate key '{path}' at line {line}", path)
        if len(container) >= MAX_MAPPING_KEYS:
            raise self._error(f"mapping has more than {MAX_MAPPING_KEYS} keys", line, top.location)
        top.key = key_text

    def _start(
        self,
        event: events.MappingStartEvent | events.SequenceStartEvent,
        container: dict[str, object] | list[object],
    ) -> None:
        tag = event.tag
        if tag is not None and tag != "!":
            expected = "map" if isinstance(container, dict) else "seq"
            if tag != f"{CORE_TAG}{expected}":
                raise tag_error(tag, _line(event))
        stack = self.stack
        if len(stack) >= MAX_DEPTH:
            self._check_depth(len(stack) + 1, _line(event))  # raises the limit's error
        if stack:
            top = stack[-1]
            value = top.value
            if type(value) is dict:
                if top.key is None:
                    raise self._error("mapping keys must be scalars", _line(event), top.location)
                location: Location = (*top.location, top.key)
            else:
                location = (*top.location, len(value))
        else:
            location = ()
        if self.nodes >= MAX_NODES:
            self._charge(1, 0, _line(event))  # raises the limit's error
        stack.append(_Frame(container, location, event.anchor, self.nodes, self.scalar_bytes))
        self.nodes += 1

    def _end(self, event: events.Event) -> None:
        stack = self.stack
        frame = stack.pop()
        size = (
            self.nodes - frame.start_nodes,
            self.scalar_bytes - frame.start_bytes,
            frame.height,
        )
        if frame.anchor is not None:
            self._define(frame.anchor, _Anchored(frame.value, *size, None))
        # The line only where attaching may fail: a list element (the list's limit) or
        # where a key is expected; a mapping's value never fails.
        line = _line(event) if stack and stack[-1].key is None else 0
        self._attach(frame.value, size, line, None)

    def _alias(self, event: events.AliasEvent, line: int) -> None:
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            raise self._error(f"policy uses more than {MAX_ALIASES} YAML aliases", line)
        target = self.anchors.get(event.anchor)
        if target is None:
            raise self._error(f"YAML alias '*{event.anchor}' refers to no complete anchor", line)
        self._check_depth(len(self.stack) + target.height, line)
        self._charge(target.nodes, target.scalar_bytes, line)
        size = (target.nodes, target.scalar_bytes, target.height)
        self._attach(target.value, size, line, target.key_text)


_SCALAR = events.ScalarEvent
_MAPPING_START = events.MappingStartEvent
_SEQUENCE_START = events.SequenceStartEvent
_MAPPING_END = events.MappingEndEvent
_SEQUENCE_END = events.SequenceEndEvent


def _line(event: events.Event) -> int:
    """The 1-based line an event starts on (0 when the parser gives no mark)."""
    mark = event.start_mark
    return mark.line + 1 if mark else 0


def _decode(text: str | bytes) -> str:
    """Check the size limit before anything else, then require UTF-8."""
    if isinstance(text, bytes):
        if len(text) > MAX_INPUT_BYTES:
            raise PolicyLoadError(SIZE_ERROR)
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError:
            raise PolicyLoadError(UTF8_ERROR) from None
    if len(text) > MAX_INPUT_BYTES:
        raise PolicyLoadError(SIZE_ERROR)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise PolicyLoadError(UTF8_ERROR) from None
    if size > MAX_INPUT_BYTES:
        raise PolicyLoadError(SIZE_ERROR)
    return text


def _yaml_error_message(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.reader.ReaderError):
        return (
            f"policy contains a character YAML does not allow "
            f"(#x{error.character:04x} at offset {error.position})"
            if isinstance(error.character, int)
            else f"policy contains a character YAML does not allow: {error.reason}"
        )
    if isinstance(error, yaml.MarkedYAMLError):
        if error.problem == "exceeded maximum nesting depth":
            # libyaml's own guard (1,000 levels) fires while it scans ahead in flow style.
            line = error.problem_mark.line + 1 if error.problem_mark else 0
            return f"policy nesting depth exceeds the limit of {MAX_DEPTH} (line {line})"
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = error.problem or "syntax error"
        context = f" ({error.context})" if error.context else ""
        return f"invalid YAML{where}: {problem}{context}"
    first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"invalid YAML: {first_line}"


#: Events read between two calls of the caller's ``checkpoint``.
CHECKPOINT_EVERY_EVENTS = 2048


def read_policy_data(
    text: str | bytes, checkpoint: Callable[[], None] | None = None
) -> dict[str, object]:
    """Parse policy text into plain data; the top level must be a mapping.

    Raises ``PolicyLoadError`` for every problem: size, encoding, YAML syntax, any limit,
    merge or duplicate keys, unsafe tags, zero or several documents, non-mapping top level.
    ``checkpoint`` is called every :data:`CHECKPOINT_EVERY_EVENTS` events (on the fast
    path every 512 lines or 1,024 flow elements), so that a check's deadline also bounds
    reading a large policy (it raises to stop the read).
    """
    decoded = _decode(text)
    if len(decoded) >= SIMPLE_FROM_CHARS:
        # Imported here: compiling its patterns (1.5 ms) costs more than it saves on the
        # few lines of a tiny policy, such as a CLI start on the seed example.
        from prover.policy.simple_yaml import read_simple

        simple = read_simple(decoded, limits(), checkpoint)
        if simple is not None:
            return simple
    return _compose(decoded, checkpoint)


#: Shorter texts are read by the event composer alone.
SIMPLE_FROM_CHARS = 1024


def limits() -> Limits:
    """This module's limits as the fast path takes them (read at each call: tests lower
    them)."""
    from prover.policy.simple_yaml import Limits

    return Limits(
        MAX_DEPTH, MAX_EVENTS, MAX_NODES, MAX_SCALAR_BYTES, MAX_MAPPING_KEYS, MAX_SEQUENCE_ITEMS
    )


def read_policy_events(
    text: str | bytes, checkpoint: Callable[[], None] | None = None
) -> dict[str, object]:
    """:func:`read_policy_data` by the event composer alone, without the fast path of
    :mod:`prover.policy.simple_yaml` (the tests compare the two)."""
    return _compose(_decode(text), checkpoint)


def _compose(decoded: str, checkpoint: Callable[[], None] | None) -> dict[str, object]:
    """Events to data: every text the fast path declines, and so every error."""
    composer = _Composer()
    loader: yaml.SafeLoader | yaml.CSafeLoader | None = None
    try:
        loader = _LOADER(decoded)
        count = 0
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, events.StreamEndEvent):
                break
            composer.feed(event)
            count += 1
            if checkpoint is not None and count % CHECKPOINT_EVERY_EVENTS == 0:
                checkpoint()
    except yaml.YAMLError as error:
        raise PolicyLoadError(_yaml_error_message(error)) from None
    except PolicyLoadError:
        raise
    except (ValueError, TypeError, RecursionError, MemoryError, UnicodeError) as error:
        raise PolicyLoadError(f"policy could not be read: {type(error).__name__}") from None
    finally:
        if loader is not None:
            loader.dispose()
    root = composer.finish()
    if not isinstance(root, dict):
        kind = "a list" if isinstance(root, list) else f"a scalar ({type(root).__name__})"
        raise PolicyLoadError(f"policy must be a mapping at the top level, got {kind}")
    return root

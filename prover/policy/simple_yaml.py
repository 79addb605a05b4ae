"""The fast path of the policy reader: plain block YAML read line by line, or declined.

:func:`read_simple` reads a small policy written in a narrow subset of YAML, the style of
nearly every real policy, without PyYAML's per-event Python objects (which alone cost
more than this whole path). It returns the data the event composer of
:mod:`prover.policy.reader` would return, or ``None`` (*declined*) for anything outside
the subset or anything the composer would refuse; a declined text goes to the composer,
which stays the one source of every error message. So this path never reports an error.

The subset, line by line (anything else declines):

- blank lines, comment lines, one leading ``---`` line; no tab, carriage return, byte
  order mark or Unicode line break (``U+0085``, ``U+2028``, ``U+2029``) anywhere;
- ``KEY:`` and ``KEY: VALUE`` lines, each optionally after ``- `` (a sequence entry whose
  content is a mapping), and ``- VALUE`` lines; a ``KEY:`` with nothing after it opens a
  nested block on the next lines (deeper, or a ``-`` list at the key's own column) or is
  null; every other line sits exactly at the column of an open mapping or list;
- KEY: a plain word (letters, digits, ``_``, ``/``; then also ``.`` and ``-``) or a
  quoted string on one line without backslashes; kept as written;
- VALUE: a one-line plain scalar (not starting with an indicator, no ``: `` inside,
  ``' #'`` starts a comment), a one-line quoted string without backslashes, or a one-line
  flow collection (``[...]``, ``{KEY: VALUE, ...}``, nested) of plain words and such
  strings.

So every node of the subset is untagged and unanchored, every scalar is a piece of the
text (so the scalars' bytes stay within the input's), plain values resolve with the same
YAML 1.2 core-schema function as the composer's, and keys are their text. The reader's
limits (depth, events, nodes, keys per mapping, elements per list, scalar bytes) are
checked on the counts; a duplicate key or an integer over the digit limit declines (a
plain ``<<``, the merge key, is no key here). Last, libyaml itself parses the text (no
Python objects, C speed): any error there, or a number of events other than this path's
own count, declines.
``tests/prover/policy/test_simple_yaml.py`` compares both paths over every policy
under tests/data, hand-written variants and random mutations of the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

import yaml

from prover.errors import PolicyLoadError
from prover.policy.scalars import _NON_STRING_STARTS, _resolve_plain

#: Only texts up to this size take this path: libyaml's pass over it, which cannot be
#: interrupted, stays within a millisecond or two.
MAX_SIMPLE_CHARS = 64 * 1024
#: Lines, and elements of flow collections, read between two calls of the checkpoint
#: (each line is one to three events; the event composer calls it every 2,048 events).
CHECKPOINT_LINES = 512
CHECKPOINT_FLOW_ITEMS = 1024

try:
    _CParser: type | None = yaml.cyaml.CParser  # type: ignore[attr-defined]
except AttributeError:  # PyYAML without libyaml: no cross-check, so no fast path
    _CParser = None


class Limits(NamedTuple):
    """The reader's limits, read at each call (tests lower them)."""

    depth: int
    events: int
    nodes: int
    scalar_bytes: int
    mapping_keys: int
    sequence_items: int


class _Decline(Exception):
    """The text is outside the subset, or the composer would refuse it."""


#: Characters this path never reads (besides tabs and CR): Unicode line breaks and the
#: byte order mark.
_EXCLUDED = re.compile("[\x85\u2028\u2029\ufeff]")
_PLAIN_KEY = r"[A-Za-z0-9_/][A-Za-z0-9_./-]*+"
_DOUBLE = r'"([^"\\]*)"'
_SINGLE = r"'((?:[^']|'')*)'"
_QUOTED_KEY = r"\"[^\"\\]*\"|'(?:[^']|'')*'"
#: One line (with its line break): indent, ``- `` and the spaces after it, a key (plain,
#: or quoted with its quotes) with its ``:`` and the spaces after it, and the rest.
_LINES = re.compile(
    rf"( *+)(?:-( ++))?(?:(?:({_PLAIN_KEY})|({_QUOTED_KEY})):(?: ++|(?=\n)|\Z))?"
    r"([^\n]*+)\n?"
)
#: The end of a line after a complete value: spaces, or a comment after a space.
_LINE_END = re.compile(r"(?: +#.*| *)")
_QUOTED_VALUE = re.compile(rf"(?:{_DOUBLE}|{_SINGLE})(?: +#.*| *)")
#: A plain scalar inside a flow collection: a word of safe characters (``-`` first only
#: before a digit or a dot, as in ``-1``).
_PLAIN_FLOW = r"(?:-(?=[0-9.]))?[A-Za-z0-9_/.~][A-Za-z0-9_/.~*@+=-]*"
_FLOW_TOKEN = re.compile(rf" *(?:([\[\]{{}},])|{_DOUBLE}|{_SINGLE}|({_PLAIN_FLOW})|(:) )")
#: The tokens above in one flow collection of scalars only (the common case), read by
#: two patterns instead of one call per token: the whole collection and what follows it
#: on the line, then its elements or key-value pairs (``findall`` finds exactly those of
#: the whole match: nothing else can start at the commas and spaces between them).
_FLOW_SCALAR = rf"(?:{_DOUBLE}|{_SINGLE}|({_PLAIN_FLOW}))"
_FLOW_PAIR = rf"{_FLOW_SCALAR} *: +{_FLOW_SCALAR}"
_FLAT_FLOW = re.compile(
    rf"(?:\[ *((?:{_FLOW_SCALAR}(?: *, *{_FLOW_SCALAR})*)?) *\]"
    rf"|\{{ *((?:{_FLOW_PAIR}(?: *, *{_FLOW_PAIR})*)?) *\}})(?: +#.*| *)"
)
_FLOW_SCALARS = re.compile(_FLOW_SCALAR)
_FLOW_PAIRS = re.compile(_FLOW_PAIR)
#: First characters of a block value that are not a plain scalar read here: YAML's
#: indicators (``-`` is read when a digit or a dot follows).
_NOT_PLAIN_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@`")
_NUMBER_AFTER_MINUS = frozenset("0123456789.")


class _Flows:
    """What the flow collections of a text add up to: scalars and collections (each a
    node; a scalar is one event, a collection two), within the limits; and the caller's
    checkpoint, called every :data:`CHECKPOINT_FLOW_ITEMS` elements."""

    __slots__ = ("checkpoint", "collections", "limits", "scalars", "until_checkpoint")

    def __init__(self, limits: Limits, checkpoint: Callable[[], None] | None) -> None:
        self.scalars = 0
        self.collections = 0
        self.limits = limits
        self.checkpoint = checkpoint
        self.until_checkpoint = CHECKPOINT_FLOW_ITEMS

    def tick(self, elements: int = 1) -> None:
        """``elements`` more elements read."""
        self.until_checkpoint -= elements
        if self.until_checkpoint <= 0:
            self.until_checkpoint = CHECKPOINT_FLOW_ITEMS
            if self.checkpoint is not None:
                self.checkpoint()


def _plain(text: str) -> object:
    """The value of a plain scalar, as the composer resolves it (or declined)."""
    if text and text[0] not in _NON_STRING_STARTS:
        return text
    try:
        return _resolve_plain(text, 0)
    except PolicyLoadError:  # an integer over the digit limit: the composer reports it
        raise _Decline from None


def _block_value(rest: str, counts: _Flows, depth: int) -> object:
    """The value written after ``KEY: `` or ``- `` (not empty, not a comment)."""
    first = rest[0]
    if first not in _NOT_PLAIN_FIRST or (first == "-" and rest[1:2] in _NUMBER_AFTER_MINUS):
        cut = rest.find(" #")
        text = (rest if cut < 0 else rest[:cut]).rstrip(" ")
        if ": " in text or text.endswith(":"):
            raise _Decline
        counts.scalars += 1
        return _plain(text)
    if first == '"' or first == "'":
        match = _QUOTED_VALUE.fullmatch(rest)
        if match is None:
            raise _Decline
        double, single = match.groups()
        counts.scalars += 1
        return double if single is None else single.replace("''", "'")
    if first == "[" or first == "{":
        flat = _FLAT_FLOW.fullmatch(rest)
        if flat is not None:
            return _flat_flow(flat, counts, depth)
        value, end = _flow(rest, 0, counts, depth)
        if _LINE_END.fullmatch(rest, end) is None:
            raise _Decline
        return value
    raise _Decline


def _quoted_or_plain(double: str, single: str, plain: str) -> object:
    """The value of a flow scalar from ``findall``'s groups ("" for an absent one)."""
    if plain:
        return _plain(plain)
    return double if double or not single else single.replace("''", "'")


def _flat_flow(flat: re.Match[str], counts: _Flows, depth: int) -> object:
    """A flow collection of scalars matched by ``_FLAT_FLOW`` in a collection at ``depth``."""
    limits = counts.limits
    if depth + 1 > limits.depth:
        raise _Decline
    counts.collections += 1
    items_text, pairs_text = flat.group(1, 8)
    if items_text is not None:
        items = [_quoted_or_plain(*item) for item in _FLOW_SCALARS.findall(items_text)]
        if len(items) > limits.sequence_items:
            raise _Decline
        counts.scalars += len(items)
        counts.tick(len(items))
        return items
    mapping: dict[str, object] = {}
    pairs = _FLOW_PAIRS.findall(pairs_text)
    counts.tick(len(pairs))
    for key_double, key_single, key_plain, *value in pairs:
        key = key_plain or key_double or key_single.replace("''", "'")
        if key in mapping or len(mapping) >= limits.mapping_keys:
            raise _Decline
        mapping[key] = _quoted_or_plain(*value)
        counts.scalars += 2
    return mapping


def _flow(text: str, position: int, counts: _Flows, depth: int) -> tuple[object, int]:
    """The flow node at ``position`` and the position after it; ``depth`` is the depth of
    the collection it is in."""
    match = _FLOW_TOKEN.match(text, position)
    if match is None:
        raise _Decline
    punctuation, double, single, plain, _colon = match.groups()
    end = match.end()
    if punctuation is None:
        if _colon is not None:
            raise _Decline
        counts.scalars += 1
        if plain is not None:
            return _plain(plain), end
        return (double if single is None else single.replace("''", "'")), end
    if punctuation != "[" and punctuation != "{":
        raise _Decline
    depth += 1
    limits = counts.limits
    if depth > limits.depth:
        raise _Decline
    counts.collections += 1
    if punctuation == "[":
        items: list[object] = []
        closing = "]"
    else:
        mapping: dict[str, object] = {}
        closing = "}"
    # The first token decides whether the collection is empty.
    match = _FLOW_TOKEN.match(text, end)
    if match is not None and match.group(1) == closing:
        return (items if closing == "]" else mapping), match.end()
    while True:
        counts.tick()
        if closing == "]":
            item, end = _flow(text, end, counts, depth)
            if len(items) >= limits.sequence_items:
                raise _Decline
            items.append(item)
        else:
            match = _FLOW_TOKEN.match(text, end)
            if match is None:
                raise _Decline
            _punctuation, double, single, plain, _colon = match.groups()
            if plain is not None:
                key = plain
            elif double is not None:
                key = double
            elif single is not None:
                key = single.replace("''", "'")
            else:
                raise _Decline
            counts.scalars += 1
            colon = _FLOW_TOKEN.match(text, match.end())
            if colon is None or colon.group(5) is None:
                raise _Decline
            if key in mapping or len(mapping) >= limits.mapping_keys:
                raise _Decline
            mapping[key], end = _flow(text, colon.end(), counts, depth)
        match = _FLOW_TOKEN.match(text, end)
        if match is None:
            raise _Decline
        punctuation = match.group(1)
        end = match.end()
        if punctuation == closing:
            return (items if closing == "]" else mapping), end
        if punctuation != ",":
            raise _Decline
        # A comma before the closing bracket is valid YAML, but not read here.


def _read(
    text: str, limits: Limits, checkpoint: Callable[[], None] | None
) -> tuple[dict[str, object], int]:
    """The data of ``text`` and its event count, or ``_Decline``."""
    flow_counts = _Flows(limits, checkpoint)  # what flow collections and quoted values add
    scalars = 0
    collections = 1  # the root mapping
    max_depth, max_keys, max_items = limits.depth, limits.mapping_keys, limits.sequence_items
    root: dict[str, object] = {}
    # The open block collections: the innermost as ``top`` (its column, and whether it
    # is a list written at its parent key's own column, which a line without ``-``
    # closes), the outer ones saved on ``outer``; ``depth`` counts them all.
    top: dict[str, object] | list[object] = root
    top_column = 0
    top_indentless = False
    outer: list[tuple[dict[str, object] | list[object], int, bool]] = []
    depth = 1
    # A ``KEY:`` with nothing after it: its mapping, key and column.
    pending: dict[str, object] | None = None
    pending_key = ""
    pending_column = 0
    marker = False  # a leading ``---`` was read
    # (``findall`` gives "" for an absent part, and one empty match at the end.)
    rows = _LINES.findall(text)
    for start in range(0, len(rows), CHECKPOINT_LINES):
        if start and checkpoint is not None:
            checkpoint()
        for indent, gap, plain_key, quoted_key, rest in rows[start : start + CHECKPOINT_LINES]:
            if plain_key:
                key: str | None = plain_key
            elif quoted_key:
                key = quoted_key[1:-1]
                if quoted_key[0] == "'":
                    key = key.replace("''", "'")
            elif not gap and (not rest or rest[0] == "#"):
                continue  # a blank or comment line
            else:
                key = None
            column = len(indent)
            if pending is not None:
                if column > pending_column or (column == pending_column and gap):
                    # A nested block: a mapping, a list, or a list at the key's column.
                    nested: dict[str, object] | list[object] = [] if gap else {}
                    pending[pending_key] = nested
                    collections += 1
                    if depth >= max_depth:
                        raise _Decline
                    outer.append((top, top_column, top_indentless))
                    depth += 1
                    top, top_column, top_indentless = nested, column, column == pending_column
                else:
                    scalars += 1  # the key's value stays null
                pending = None
            if top_column != column or top_indentless:
                while top_column > column or (top_column == column and top_indentless and not gap):
                    if not outer:
                        raise _Decline
                    top, top_column, top_indentless = outer.pop()
                    depth -= 1
                if top_column != column:
                    raise _Decline
            if type(top) is list:
                if not gap or len(top) >= max_items:
                    raise _Decline
                if key is None:
                    if not rest or rest[0] == "#":
                        raise _Decline  # an empty entry
                    top.append(_block_value(rest, flow_counts, depth))
                    continue
                # ``- KEY: ...``: a mapping whose keys sit at the column after ``- ``.
                mapping: dict[str, object] = {}
                top.append(mapping)
                collections += 1
                if depth >= max_depth:
                    raise _Decline
                outer.append((top, top_column, top_indentless))
                depth += 1
                top, top_column, top_indentless = mapping, column + 1 + len(gap), False
            elif key is None or gap:
                if key is None and not gap and not root and not marker and column == 0:
                    # The document start marker, once, before any content.
                    if rest[:3] == "---" and _LINE_END.fullmatch(rest, 3) is not None:
                        marker = True
                        continue
                raise _Decline
            else:
                mapping = top  # type: ignore[assignment]
            # (A plain key here never is ``<<``, the merge key; a quoted one is a plain key.)
            if key in mapping or len(mapping) >= max_keys:
                raise _Decline
            scalars += 1
            if not rest or rest[0] == "#":
                mapping[key] = None  # replaced if a nested block follows
                pending, pending_key, pending_column = mapping, key, top_column
                continue
            first = rest[0]
            if first in _NOT_PLAIN_FIRST and not (
                first == "-" and rest[1:2] in _NUMBER_AFTER_MINUS
            ):
                mapping[key] = _block_value(rest, flow_counts, depth)
                continue
            # A plain scalar, the common case, read here without a call.
            cut = rest.find(" #")
            if cut >= 0:
                rest = rest[:cut]
            if rest[-1] == " ":
                rest = rest.rstrip(" ")
            if ":" in rest and (": " in rest or rest[-1] == ":"):
                raise _Decline
            scalars += 1
            mapping[key] = rest if first not in _NON_STRING_STARTS else _plain(rest)
    if not root:
        raise _Decline  # no content: the composer reports an empty policy
    if pending is not None:
        scalars += 1  # the null value
    scalars += flow_counts.scalars
    collections += flow_counts.collections
    nodes = scalars + collections
    events = scalars + 2 * collections + 3  # stream start, document start and end
    if nodes > limits.nodes or events > limits.events:
        raise _Decline
    return root, events


def read_simple(
    text: str, limits: Limits, checkpoint: Callable[[], None] | None = None
) -> dict[str, object] | None:
    """The data of ``text`` exactly as the event composer reads it, or ``None`` when this
    path declines. ``checkpoint`` is called every :data:`CHECKPOINT_LINES` lines and
    :data:`CHECKPOINT_FLOW_ITEMS` flow elements (it raises to stop the read)."""
    if _CParser is None or len(text) > MAX_SIMPLE_CHARS:
        return None
    if "\t" in text or "\r" in text or (not text.isascii() and _EXCLUDED.search(text)):
        return None
    if len(text.encode("utf-8")) > limits.scalar_bytes:
        return None  # (every scalar read here is a piece of the text)
    try:
        data, events = _read(text, limits, checkpoint)
    except _Decline:
        return None
    # libyaml's own parse, without Python objects: the text must be valid YAML with
    # exactly the events counted here (and the stream end).
    try:
        if _CParser(text).raw_parse() != events + 1:
            return None
    except (yaml.YAMLError, ValueError, TypeError, MemoryError):
        return None  # the composer reports it
    return data

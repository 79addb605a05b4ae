"""Structured and byte-level mutations, as hypothesis strategies over seed documents.

A structured mutation edits a parsed document at a random place: replace a value with a
hostile scalar or a piece of another document, delete, insert a hostile key, wrap, nest
deeply, repeat, rename. ``gentle`` keeps each scalar's type, so more mutants stay valid
and reach the solver. Serialisation then picks YAML (block or flow), JSON, a BOM, an
encoding, str or bytes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.hostile.corpus import HOSTILE_KEYS, HOSTILE_SCALARS, SYNTAX_FRAGMENTS

Slot = tuple[Any, Any]  # (container, key or index); (None, None) is the root

OPERATIONS = ("replace", "splice", "delete", "insert", "wrap", "nest", "repeat", "rename", "text")
GENTLE_OPERATIONS = ("same_type", "same_type", "same_type", "text", "repeat", "delete")


MAX_SLOTS = 2_000


def _slots(node: Any, into: list[Slot], depth: int = 0) -> None:
    if depth > 40 or len(into) >= MAX_SLOTS:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            into.append((node, key))
            _slots(value, into, depth + 1)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            into.append((node, index))
            _slots(value, into, depth + 1)


def _same_type_scalars(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [True, False]
    if isinstance(value, int):
        return [s for s in HOSTILE_SCALARS if type(s) is int]
    if isinstance(value, str):
        return [s for s in HOSTILE_SCALARS if isinstance(s, str)]
    if isinstance(value, list):
        return [[], [value[0]] * 3 if value else [], list(reversed(value))]
    if isinstance(value, dict):
        return [{}, dict(reversed(list(value.items())))]
    return [None]


@st.composite
def _text_edit(draw: st.DrawFn, value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    position = draw(st.integers(0, len(text)))
    piece = draw(
        st.one_of(
            st.sampled_from(SYNTAX_FRAGMENTS),
            st.text(max_size=6),
            st.sampled_from(["*", "**", "?", "[a-z]", "{a,b}", "%2F", "..", "\x00", "\ud800"]),
        )
    )
    cut = draw(st.integers(0, 3))
    return text[:position] + piece + text[position + cut :]


@st.composite
def mutate_once(draw: st.DrawFn, document: Any, donors: Sequence[Any], gentle: bool = False) -> Any:
    """``document`` (already a private copy) with one mutation applied; returns the root."""
    slots: list[Slot] = [(None, None)]
    _slots(document, slots)
    container, key = draw(st.sampled_from(slots))
    current = document if container is None else container[key]
    operation = draw(st.sampled_from(GENTLE_OPERATIONS if gentle else OPERATIONS))
    new: Any = current
    if operation == "replace":
        new = copy.deepcopy(draw(st.sampled_from(HOSTILE_SCALARS)))
    elif operation == "same_type":
        new = copy.deepcopy(draw(st.sampled_from(_same_type_scalars(current))))
    elif operation == "splice":
        donor_slots: list[Slot] = []
        _slots(draw(st.sampled_from(list(donors))), donor_slots)
        if donor_slots:
            donor_container, donor_key = draw(st.sampled_from(donor_slots))
            new = copy.deepcopy(donor_container[donor_key])
    elif operation == "delete" and container is not None:
        del container[key]
        return document
    elif operation == "insert":
        target = current if isinstance(current, dict | list) else container
        extra = draw(st.sampled_from(HOSTILE_SCALARS))
        if isinstance(target, dict):
            target[draw(st.sampled_from(HOSTILE_KEYS))] = copy.deepcopy(extra)
        elif isinstance(target, list):
            target.insert(draw(st.integers(0, len(target))), copy.deepcopy(extra))
        return document
    elif operation == "wrap":
        new = draw(st.sampled_from([[current], {"allow": current}, {"any": [current]}]))
    elif operation == "nest":
        for _ in range(draw(st.integers(1, 120))):
            new = [new]
    elif operation == "repeat":
        # Shared references on purpose: YAML serialises them as anchors and aliases.
        times = draw(st.integers(2, 60))
        new = current * times if isinstance(current, list) and current else [current] * times
    elif operation == "rename" and isinstance(container, dict):
        value = container.pop(key)
        renamed = draw(st.sampled_from([str(key).upper(), f"{key} ", f"{key}_", str(key)[:-1]]))
        container[renamed] = value
        return document
    elif operation == "text":
        new = draw(_text_edit(current))
    if container is None:
        return new
    container[key] = new
    return document


@st.composite
def mutated(draw: st.DrawFn, seeds: Sequence[Any], gentle: bool = False, most: int = 4) -> Any:
    """A deep copy of one seed with 1..``most`` mutations."""
    document = copy.deepcopy(draw(st.sampled_from(list(seeds))))
    for _ in range(draw(st.integers(1, most))):
        document = draw(mutate_once(document, seeds, gentle))
    return document


def _yaml(document: Any, flow: bool) -> str:
    return yaml.safe_dump(
        document, default_flow_style=flow, allow_unicode=True, sort_keys=False, width=80
    )


@st.composite
def serialized(draw: st.DrawFn, document: Any, gentle: bool = False) -> str | bytes:
    """``document`` as policy text: YAML or JSON, str or bytes, perhaps with a BOM.

    ``gentle``: UTF-8 only and no prefix, so that the text is as valid as the document.
    """
    form = draw(st.sampled_from(["yaml", "yaml-flow", "json", "json-ascii"]))
    try:
        if form == "yaml":
            text = _yaml(document, False)
        elif form == "yaml-flow":
            text = _yaml(document, True)
        else:
            text = json.dumps(document, ensure_ascii=form == "json-ascii", default=str)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        text = json.dumps(document, ensure_ascii=True, default=str)
    if gentle:
        return text if draw(st.booleans()) else text.encode("utf-8", "surrogatepass")
    prefix = draw(st.sampled_from(["", "", "", "---\n", "%YAML 1.2\n---\n", "# c\n", "\ufeff"]))
    text = prefix + text
    encoding = draw(st.sampled_from(["str", "str", "utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    if encoding == "str":
        return text
    return text.encode(encoding, "surrogatepass" if encoding.startswith("utf") else "replace")


@st.composite
def byte_mutated(draw: st.DrawFn, texts: Sequence[str]) -> bytes:
    """A valid text's UTF-8 bytes with a few byte-level edits."""
    data = bytearray(draw(st.sampled_from(list(texts))).encode("utf-8"))
    for _ in range(draw(st.integers(1, 5))):
        position = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["insert", "delete", "flip", "truncate", "duplicate"]))
        if edit == "insert":
            data[position:position] = draw(
                st.one_of(
                    st.binary(min_size=1, max_size=4),
                    st.sampled_from(
                        [b"\x00", b"\xef\xbb\xbf", b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80"]
                    ),
                )
            )
        elif edit == "delete":
            del data[position : position + draw(st.integers(1, 8))]
        elif edit == "flip" and data:
            index = min(position, len(data) - 1)
            data[index] ^= 1 << draw(st.integers(0, 7))
        elif edit == "truncate":
            del data[position:]
        elif edit == "duplicate":
            data[position:position] = data[position : position + draw(st.integers(1, 40))]
    return bytes(data)

"""Scalar resolution with the YAML 1.2 core schema, as the reference parser reads scalars.

PyYAML's own resolver follows YAML 1.1, where ``yes``/``on`` are booleans, ``0443`` is
octal, ``1:30`` is a sexagesimal integer and ``2024-01-01`` a date. An untagged plain
scalar here is null, a boolean, an integer (decimal, ``0o`` octal, ``0x`` hex), a float
or else a string; quoted and block scalars are strings. Only the core tags (``!!str``,
``!!int``, ``!!float``, ``!!bool``, ``!!null``, and ``!!map``/``!!seq`` on collections) and
the non-specific ``!`` are accepted; any other tag (``!!python/...``, ``!!set``,
``!!binary``, local tags) is refused.
"""

from __future__ import annotations

import math
import re

from yaml import events

from prover.errors import PolicyLoadError

MAX_INT_DIGITS = 40

CORE_TAG = "tag:yaml.org,2002:"
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUES = frozenset({"true", "True", "TRUE"})
_FALSES = frozenset({"false", "False", "FALSE"})
_DECIMAL = re.compile(r"[-+]?[0-9]+")
_OCTAL = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
#: The first characters of every plain scalar that is not a string (null, booleans,
#: integers, floats, infinities, NaN): any other first character makes a string at once.
_NON_STRING_STARTS = frozenset("0123456789+-.~nNtTfF")
_TAGGED_TYPES: dict[str, tuple[type, ...]] = {
    f"{CORE_TAG}null": (type(None),),
    f"{CORE_TAG}bool": (bool,),
    f"{CORE_TAG}int": (int,),
    f"{CORE_TAG}float": (float, int),
}


def tag_error(tag: str | None, line: int) -> PolicyLoadError:
    """The error for a tag outside the safe set (``!!x`` is shown for core tags)."""
    shown = f"!!{tag[len(CORE_TAG) :]}" if tag and tag.startswith(CORE_TAG) else str(tag)
    if tag == f"{CORE_TAG}merge":
        return PolicyLoadError(f"YAML merge keys ('<<') are not supported (line {line})")
    return PolicyLoadError(
        f"unsupported YAML tag '{shown}' at line {line}; only plain data (strings, "
        "numbers, booleans, null, mappings and lists) is allowed"
    )


def _to_int(text: str, line: int) -> int:
    digits = text.lstrip("+-")
    if len(digits) > MAX_INT_DIGITS:
        raise PolicyLoadError(f"integer at line {line} has more than {MAX_INT_DIGITS} digits")
    if _OCTAL.fullmatch(text):
        return int(text[2:], 8)
    if _HEX.fullmatch(text):
        return int(text[2:], 16)
    return int(text, 10)


def _resolve_plain(text: str, line: int) -> object:
    """YAML 1.2 core schema resolution of an untagged plain scalar."""
    if text and text[0] not in _NON_STRING_STARTS:
        return text
    if text in _NULLS:
        return None
    if text in _TRUES:
        return True
    if text in _FALSES:
        return False
    if _DECIMAL.fullmatch(text) or _OCTAL.fullmatch(text) or _HEX.fullmatch(text):
        return _to_int(text, line)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


def resolve_scalar(event: events.ScalarEvent, line: int) -> object:
    """The Python value of a scalar event, or ``PolicyLoadError`` for a refused tag."""
    tag, text = event.tag, event.value
    if tag is None:
        return text if event.style else _resolve_plain(text, line)
    if tag in ("!", f"{CORE_TAG}str"):
        return text
    expected = _TAGGED_TYPES.get(tag)
    if expected is None:
        raise tag_error(tag, line)
    value = _resolve_plain(text, line)
    if type(value) not in expected:
        shown = tag[len(CORE_TAG) :]
        raise PolicyLoadError(f"value '{text}' at line {line} is not a valid !!{shown}")
    return float(value) if tag == f"{CORE_TAG}float" else value

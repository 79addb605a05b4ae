"""Turn a pydantic ``ValidationError`` into one clear ``PolicyLoadError``.

Pydantic's own rendering is a multi-line dump with its internal error types; users get
one sentence naming the field by its dotted path (``network_policies.gh.endpoints[0]
.port``) and what was expected instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from prover.errors import PolicyLoadError
from prover.policy.paths import render_path
from prover.policy.schema import CUSTOM_ERROR

_EXPECTED: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "string_type": "a string",
    "bool_type": "a boolean (true or false)",
    "bool_parsing": "a boolean (true or false)",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "tuple_type": "a list",
    "float_type": "a number",
}

_BOUNDS: dict[str, str] = {
    "less_than_equal": "at most {le}",
    "less_than": "less than {lt}",
    "greater_than_equal": "at least {ge}",
    "greater_than": "greater than {gt}",
}

_SHOWN_TEXT = 80


def describe_value(value: object) -> str:
    """A short description of a user's value for an error message."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= _SHOWN_TEXT else value[:_SHOWN_TEXT] + "..."
        return f"the string {shown!r}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def describe_error(error: ErrorDetails) -> tuple[str, str]:
    """The message and dotted path of one pydantic error."""
    context = error.get("ctx") or {}
    location = tuple(error["loc"]) + tuple(context.get("sub", ()))
    path = render_path(location)
    kind = error["type"]
    value = error.get("input")
    if kind == CUSTOM_ERROR:
        parts = context["parts"]
        return (parts[0] if len(parts) == 1 else f"{parts[0]}{path}{parts[1]}"), path
    if kind == "extra_forbidden":
        return f"unknown field '{path}' in authored policy", path
    if kind == "missing":
        return f"missing required field '{path}'", path
    if kind == "null_value" or value is None:
        return f"field '{path}' must not be null", path
    if kind in _EXPECTED:
        return f"field '{path}' must be {_EXPECTED[kind]} (got {describe_value(value)})", path
    if kind in _BOUNDS:
        bound = _BOUNDS[kind].format(**context)
        return f"field '{path}' must be {bound} (got {describe_value(value)})", path
    if kind == "literal_error":
        expected = context.get("expected", "")
        return f"field '{path}' must be {expected} (got {describe_value(value)})", path
    return f"field '{path}' is invalid: {error['msg']}", path


#: How many problems of one policy an error lists (the rest are counted).
MAX_LISTED_ERRORS = 10


def load_error(error: ValidationError) -> PolicyLoadError:
    """Every problem of a validation error (up to :data:`MAX_LISTED_ERRORS`) as one
    ``PolicyLoadError``, so that one round trip fixes them all; its ``path`` is the
    first problem's. A single problem reads exactly as before."""
    details = error.errors(include_url=False)
    if not details:
        return PolicyLoadError("policy is invalid")
    return PolicyLoadError(*describe_errors(details))


def describe_errors(details: Iterable[ErrorDetails]) -> tuple[str, str]:
    """The message listing every problem (up to :data:`MAX_LISTED_ERRORS`, the rest
    counted) and the first problem's path; a single problem reads as itself."""
    described: list[tuple[str, str]] = []
    for detail in details:
        item = describe_error(detail)
        if item not in described:
            described.append(item)
    message, path = described[0]
    if len(described) == 1:
        return message, path
    listed = [m for m, _ in described[:MAX_LISTED_ERRORS]]
    more = len(described) - len(listed)
    text = f"{len(described)} problems: " + "; ".join(listed)
    if more:
        text += f"; and {more} more"
    return text, path

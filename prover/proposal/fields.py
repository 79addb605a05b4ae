"""Turning pydantic validation errors into ``ProposalError`` messages that name the field."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from prover.errors import ProposalError
from prover.policy.paths import render_path

M = TypeVar("M", bound=BaseModel)


#: How many problems of one document a single error message lists.
MAX_ERRORS = 10


def _described(detail: Any, prefix: tuple[str | int, ...]) -> tuple[str, str]:
    location = prefix + tuple(part for part in detail["loc"] if isinstance(part, str | int))
    message = detail["msg"]
    if detail["type"] == "extra_forbidden":
        message = "unknown field"
    elif detail["type"] == "missing":
        message = "field required"
    # Fields typed as tuples are lists in every document an agent writes.
    message = message.replace("valid tuple", "valid list").replace("Tuple", "List")
    return render_path(location), message


def first_error(error: ValidationError, prefix: tuple[str | int, ...] = ()) -> tuple[str, str]:
    """(dotted field path, message) of the first problem pydantic found."""
    return _described(error.errors(include_url=False)[0], prefix)


def all_errors(error: ValidationError, prefix: tuple[str | int, ...] = ()) -> list[str]:
    """Every problem (up to :data:`MAX_ERRORS`), each as "field 'path': message"."""
    details = error.errors(include_url=False)
    lines = []
    for detail in details[:MAX_ERRORS]:
        path, message = _described(detail, prefix)
        lines.append(f"field '{path}': {message}" if path else message)
    if len(details) > MAX_ERRORS:
        lines.append(f"and {len(details) - MAX_ERRORS} more")
    return lines


def parse_model(model: type[M], data: Any, what: str, prefix: tuple[str | int, ...] = ()) -> M:
    """Validate ``data`` as ``model``; errors name ``what`` and the dotted field.

    Models use pydantic's strict scalar types, so no string is coerced to a flag.
    """
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = all_errors(error, prefix)
        if len(problems) == 1:
            path, message = first_error(error, prefix)
            where = f" field '{path}'" if path else ""
            raise ProposalError(f"{what}{where}: {message}") from None
        raise ProposalError(f"{what}: {len(problems)} problems: " + "; ".join(problems)) from None

"""Turning pydantic validation errors into ``ProposalError`` messages that name the field."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from prover.errors import ProposalError
from prover.policy.paths import render_path

M = TypeVar("M", bound=BaseModel)


def first_error(error: ValidationError, prefix: tuple[str | int, ...] = ()) -> tuple[str, str]:
    """(dotted field path, message) of the first problem pydantic found."""
    detail = error.errors(include_url=False)[0]
    location = prefix + tuple(part for part in detail["loc"] if isinstance(part, str | int))
    message = detail["msg"]
    if detail["type"] == "extra_forbidden":
        message = "unknown field"
    elif detail["type"] == "missing":
        message = "field required"
    return render_path(location), message


def parse_model(model: type[M], data: Any, what: str, prefix: tuple[str | int, ...] = ()) -> M:
    """Validate ``data`` as ``model``; errors name ``what`` and the dotted field.

    Models use pydantic's strict scalar types, so no string is coerced to a flag.
    """
    try:
        return model.model_validate(data)
    except ValidationError as error:
        path, message = first_error(error, prefix)
        where = f" field '{path}'" if path else ""
        raise ProposalError(f"{what}{where}: {message}") from None

"""The single entry point from policy text to a validated ``AuthoredPolicy``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from pydantic import ValidationError

from prover.errors import PolicyLoadError
from prover.policy.mainline import mainline_data
from prover.policy.messages import load_error
from prover.policy.reader import read_policy_data
from prover.policy.schema import AuthoredPolicy


def load_policy(
    text: str | bytes,
    checkpoint: Callable[[], None] | None = None,
    *,
    reference: bool = False,
) -> AuthoredPolicy:
    """Read YAML or JSON policy text strictly; every failure is a ``PolicyLoadError``.

    ``checkpoint`` (e.g. ``Budget.checkpoint``) is called now and then while reading and
    may raise to stop a read that outlives the caller's deadline. By default the policy
    is read as the mainline runtime reads it (:mod:`prover.policy.mainline`);
    ``reference`` keeps the reference prover's stricter reading.
    """
    data = read_policy_data(text, checkpoint)
    if not reference:
        data = mainline_data(data)
    elif isinstance(data, dict) and "inference" in data:
        raise PolicyLoadError("unknown field 'inference' in authored policy", "inference")
    try:
        return AuthoredPolicy.model_validate(data)
    except ValidationError as error:
        raise load_error(error) from None


def policy_sha256(text: str | bytes) -> str:
    """Hex SHA-256 of the policy text as given (``str`` is hashed as its UTF-8 bytes)."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()

"""The server's default environment evidence (``policy-prover serve --environment FILE``).

A tool call that passes no ``environment`` argument uses this document; one that passes
an empty string uses none.
"""

from __future__ import annotations

_default: str | None = None


def set_default_environment(text: str | None) -> None:
    global _default
    _default = text


def environment_for_call(argument: str | None) -> str | None:
    """The evidence text a call uses: its own argument, else the server's default."""
    if argument is None:
        return _default
    return argument or None

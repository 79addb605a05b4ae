"""Rendering of field locations as the dotted paths used in every load error.

A location is a tuple of mapping keys (``str``) and list indices (``int``); it renders as
``network_policies.gh.endpoints[0].host``: keys joined with ``.``, indices as ``[i]``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prover.results.text import escape_control

Location = tuple[str | int, ...]


def render_path(location: Iterable[str | int]) -> str:
    """Render a location; the document root renders as ``""``."""
    parts: list[str] = []
    for item in location:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif parts:
            parts.append(f".{escape_control(item)}")
        else:
            parts.append(escape_control(item))
    return "".join(parts)

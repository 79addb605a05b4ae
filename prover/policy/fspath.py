"""Lexical normalisation of the filesystem paths of a policy (no pydantic here: both the
schema and the fast loader use it)."""

from __future__ import annotations


def normalize_filesystem_path(raw: str) -> str | None:
    """Lexical normalisation (``/usr//./lib/`` -> ``/usr/lib``); None if not allowed.

    A path must start with ``/`` and contain no ``..`` segment.
    """
    segments = raw.split("/")
    if not raw.startswith("/") or ".." in segments:
        return None
    return "/" + "/".join(segment for segment in segments if segment not in ("", "."))

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


def is_beneath(path: str, ancestor: str) -> bool:
    """``path`` equals ``ancestor`` or lies in its hierarchy (both canonical)."""
    if ancestor == "/":
        return path.startswith("/")
    return path == ancestor or path.startswith(ancestor + "/")

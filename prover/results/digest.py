"""SHA-256 of the texts a check reads, without loading OpenSSL for small ones.

``hashlib`` loads OpenSSL's ``_hashlib`` (some 2 to 3 ms of a CLI cold start); CPython's
built-in SHA-256 needs no loading and gives the same digest, but is slower on large
inputs, where OpenSSL's pays for its loading: texts from :data:`LARGE` bytes use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: From this size on, hashlib (OpenSSL) is used.
LARGE = 256 * 1024


def _builtin() -> Callable[[bytes], Any] | None:
    for name in ("_sha2", "_sha256"):  # CPython 3.12+, then 3.11
        try:
            module = __import__(name)
        except ImportError:
            continue
        function: Callable[[bytes], Any] | None = getattr(module, "sha256", None)
        if function is not None:
            return function
    return None


_BUILTIN = _builtin()


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    if _BUILTIN is not None and len(data) < LARGE:
        return str(_BUILTIN(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()

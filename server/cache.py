"""A bounded LRU cache of ``check_boundary`` results for the life of one MCP server.

Agents often repeat a check verbatim (a retry, the same subagent policy vetted again).
Only deterministic outcomes are kept: ``within_boundary``, ``exceeds_boundary``,
``unsupported`` and ``error`` depend on the two texts alone. ``inconclusive`` depends on
time and load (a timeout, a cancellation, a lost race for a worker) and is never cached,
so a retry with the same inputs really runs the check again.

The key is the SHA-256 of the two policy texts and the options (with lengths, so no two
different inputs share a preimage), so the cache holds digests and results, never the
policy texts: its memory is bounded by ``max_entries`` results of a few kilobytes each.
A hit returns a copy of exactly what the check returned the first time, receipt included
(whose ``elapsed_ms`` is the time of the check that decided). The result format is closed
(``additionalProperties: false``), so a hit is not marked in the result; it is logged and
counted in :attr:`ResultCache.hits`.

Each server built by :func:`server.app.create_server` gets its own cache (on stdio one
per connection, on streamable HTTP one per process); :func:`attach_cache` and
:func:`cache_of` keep the association without touching the SDK's objects.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import weakref
from dataclasses import dataclass
from typing import Any

from prover import __version__
from prover.run.lru import BoundedLru

log = logging.getLogger(__name__)

CACHE_SIZE_ENV = "POLICY_PROVER_CACHE_SIZE"
DEFAULT_CACHE_SIZE = 256

#: Verdicts that depend on the inputs alone. ``inconclusive`` is deliberately absent.
CACHEABLE_RESULTS = frozenset({"within_boundary", "exceeds_boundary", "unsupported", "error"})
#: Reason codes that depend on time or load, refused even under a cacheable verdict.
TIME_DEPENDENT_REASONS = frozenset({"solver_timeout", "solver_unknown", "cancelled"})

#: Inputs up to this many characters are hashed on the event loop (well under 1 ms).
_HASH_INLINE_LIMIT = 256 * 1024

_configured_size: int | None = None


@dataclass(frozen=True)
class CachedResult:
    """What the tool returned: the text block and the structured document."""

    text: str
    document: dict[str, Any]


def _digest_update(digest: Any, part: bytes) -> None:
    digest.update(len(part).to_bytes(8, "big"))
    digest.update(part)


def _as_bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text


def cache_key(
    candidate: str | bytes,
    boundary: str | bytes,
    timeout_ms: int,
    environment: str | bytes | None = None,
) -> str:
    """SHA-256 over the tool, the prover version, both texts and the options (the
    environment evidence included, when there is one)."""
    digest = hashlib.sha256()
    for part in (b"check_boundary", __version__.encode(), _as_bytes(candidate)):
        _digest_update(digest, part)
    for part in (_as_bytes(boundary), str(timeout_ms).encode()):
        _digest_update(digest, part)
    if environment is not None:
        _digest_update(digest, b"environment")
        _digest_update(digest, _as_bytes(environment))
    # Bytes and text with the same encoding are the same policy, but keep the kinds apart
    # anyway: the receipt of a str input and of a bytes input are computed differently.
    kinds = f"{type(candidate).__name__},{type(boundary).__name__}"
    _digest_update(digest, kinds.encode())
    return digest.hexdigest()


def is_cacheable(document: dict[str, Any]) -> bool:
    """True when the result depends on the inputs alone (never an inconclusive one)."""
    return (
        document.get("result") in CACHEABLE_RESULTS
        and document.get("reason_code") not in TIME_DEPENDENT_REASONS
    )


class ResultCache:
    """Least-recently-used results, at most ``max_entries`` (0 disables caching)."""

    def __init__(self, max_entries: int = DEFAULT_CACHE_SIZE) -> None:
        if max_entries < 0:
            raise ValueError("cache size must be at least 0")
        self.max_entries = max_entries
        self._entries: BoundedLru[str, CachedResult] = BoundedLru(max_entries)

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0

    @property
    def hits(self) -> int:
        return self._entries.hits

    @property
    def misses(self) -> int:
        return self._entries.misses

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> CachedResult | None:
        """A private copy of the stored result, or ``None``; counts hits and misses."""
        if not self.enabled:
            return None
        entry = self._entries.get(key)
        if entry is None:
            return None
        return CachedResult(text=entry.text, document=copy.deepcopy(entry.document))

    def put(self, key: str, text: str, document: dict[str, Any]) -> bool:
        """Store a deterministic result; return whether it was stored."""
        if not self.enabled or not is_cacheable(document):
            return False
        return self._entries.put(key, CachedResult(text=text, document=copy.deepcopy(document)))

    def clear(self) -> None:
        self._entries.clear()


def parse_cache_size(text: str) -> int:
    """A cache size from text: a whole number, at least 0."""
    value = int(text.strip())
    if value < 0:
        raise ValueError(f"cache size must be at least 0, got {value}")
    return value


def set_cache_size(size: int | None) -> None:
    """Size of the caches of servers created from now on (``None``: the environment's)."""
    global _configured_size
    if size is not None and size < 0:
        raise ValueError("cache size must be at least 0")
    _configured_size = size


def configured_cache_size() -> int:
    """:func:`set_cache_size` if called, else ``POLICY_PROVER_CACHE_SIZE``, else 256."""
    if _configured_size is not None:
        return _configured_size
    raw = os.environ.get(CACHE_SIZE_ENV, "").strip()
    if not raw:
        return DEFAULT_CACHE_SIZE
    try:
        return parse_cache_size(raw)
    except ValueError:
        log.warning(
            "ignoring %s=%r: not a whole number >= 0; using %d",
            CACHE_SIZE_ENV,
            raw,
            DEFAULT_CACHE_SIZE,
        )
        return DEFAULT_CACHE_SIZE


_caches: weakref.WeakKeyDictionary[Any, ResultCache] = weakref.WeakKeyDictionary()


def attach_cache(server: Any, max_entries: int | None = None) -> ResultCache:
    """Give ``server`` its own result cache (size: ``max_entries`` or the configured one)."""
    cache = ResultCache(configured_cache_size() if max_entries is None else max_entries)
    _caches[server] = cache
    return cache


def cache_of(server: Any) -> ResultCache | None:
    """The cache attached to ``server``, if any."""
    try:
        return _caches.get(server)
    except TypeError:  # not weak-referenceable: no cache
        return None


def cache_for_request(ctx: Any) -> ResultCache | None:
    """The enabled cache of the server handling the request ``ctx``, if any."""
    try:
        cache = cache_of(ctx.mcp_server)
    except Exception:  # outside a request: no server, no cache
        return None
    return cache if cache is not None and cache.enabled else None


async def cache_key_async(
    candidate: str | bytes,
    boundary: str | bytes,
    timeout_ms: int,
    environment: str | bytes | None = None,
) -> str:
    """:func:`cache_key`, hashed in a thread when the texts are large (up to 2 x 4 MiB)."""
    size = len(candidate) + len(boundary) + len(environment or "")
    if size <= _HASH_INLINE_LIMIT:
        return cache_key(candidate, boundary, timeout_ms, environment)
    import anyio.to_thread  # here, not at the top: the CLI imports this module at start-up

    return await anyio.to_thread.run_sync(cache_key, candidate, boundary, timeout_ms, environment)


__all__ = [
    "CACHE_SIZE_ENV",
    "DEFAULT_CACHE_SIZE",
    "CachedResult",
    "ResultCache",
    "attach_cache",
    "cache_for_request",
    "cache_key",
    "cache_key_async",
    "cache_of",
    "configured_cache_size",
    "is_cacheable",
    "parse_cache_size",
    "set_cache_size",
]

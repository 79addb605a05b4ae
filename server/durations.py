"""``--timeout`` values: a positive integer followed by ``ms``, ``s`` or ``m``.

The messages are the reference CLI's (spec §12), because scripts match on them. The
arithmetic follows the reference's unsigned 64-bit parsing: a number that does not fit,
or a product that overflows, is "too large"; anything that fits but exceeds the solver's
32-bit millisecond timeout is refused with the explicit maximum.
"""

from __future__ import annotations

U64_MAX = 2**64 - 1
MAX_TIMEOUT_MS = 4_294_967_295

_UNITS_MS: tuple[tuple[str, int], ...] = (("ms", 1), ("s", 1_000), ("m", 60_000))


class DurationError(ValueError):
    """A ``--timeout`` value that cannot be used; the message is shown to the user."""


def parse_duration_ms(text: str) -> int:
    """Return the duration in milliseconds or raise :class:`DurationError`."""
    unit = next((unit for unit in _UNITS_MS if text.endswith(unit[0])), None)
    if unit is None:
        raise DurationError("duration must end in ms, s, or m")
    suffix, factor = unit
    digits = text[: -len(suffix)]
    if not digits or not (digits.isascii() and digits.isdigit()):
        raise DurationError("duration must use a positive integer")
    value = int(digits)
    if value > U64_MAX or value * factor > U64_MAX:
        raise DurationError("duration is too large")
    millis = value * factor
    if millis == 0:
        raise DurationError("duration must be positive")
    if millis > MAX_TIMEOUT_MS:
        raise DurationError(f"duration must not exceed {MAX_TIMEOUT_MS}ms")
    return millis

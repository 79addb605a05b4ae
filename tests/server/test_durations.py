"""``--timeout`` parsing (spec §12)."""

from __future__ import annotations

import pytest

from server.durations import DurationError, parse_duration_ms


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("1ms", 1),
        ("250ms", 250),
        ("10s", 10_000),
        ("2m", 120_000),
        ("007s", 7_000),
        ("4294967295ms", 4_294_967_295),
        ("71582m", 71_582 * 60_000),
    ],
)
def test_valid_durations_are_converted_to_milliseconds(text: str, millis: int) -> None:
    assert parse_duration_ms(text) == millis


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0ms", "duration must be positive"),
        ("0s", "duration must be positive"),
        ("0m", "duration must be positive"),
        ("10", "duration must end in ms, s, or m"),
        ("", "duration must end in ms, s, or m"),
        ("10h", "duration must end in ms, s, or m"),
        ("s", "duration must use a positive integer"),
        ("ms", "duration must use a positive integer"),
        ("-5s", "duration must use a positive integer"),
        ("+5s", "duration must use a positive integer"),
        ("1.5s", "duration must use a positive integer"),
        (" 5s", "duration must use a positive integer"),
        ("٣s", "duration must use a positive integer"),
        ("18446744073709551616ms", "duration is too large"),
        ("18446744073709551615s", "duration is too large"),
        ("4294967296ms", "duration must not exceed 4294967295ms"),
        ("71583m", "duration must not exceed 4294967295ms"),
        ("18446744073709551615ms", "duration must not exceed 4294967295ms"),
    ],
)
def test_invalid_durations_are_refused_with_the_reference_message(text: str, message: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_duration_ms(text)
    assert str(info.value) == message

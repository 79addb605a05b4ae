"""Control characters escaped as the reference writes them, code point by code point."""

from __future__ import annotations

import random

from prover.results.text import _FORGING, escape_control, escape_lines


def _one_by_one(text: str) -> str:
    """The definition, one character at a time."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\t\r\n":
            out.append({"\t": "\\t", "\r": "\\r", "\n": "\\n"}[ch])
        elif code < 0x20 or 0x7F <= code <= 0x9F or code in _FORGING:
            out.append(f"\\u{{{code:x}}}")
        else:
            out.append(ch)
    return "".join(out)


def test_every_code_point_of_the_first_planes_is_escaped_as_defined() -> None:
    for code in range(0x3000):
        ch = chr(code)
        assert escape_control(f"a{ch}b") == _one_by_one(f"a{ch}b"), hex(code)


def test_mixed_text_is_escaped_as_defined() -> None:
    rng = random.Random(5)
    alphabet = "ab é\t\r\n\x1b\x7f\x85\u2028\u2029\u202e\u2066\u061c\U0001f600"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
        assert escape_control(text) == _one_by_one(text)
        assert "\n" not in escape_control(text)
    assert escape_lines("a\nb\x1b") == "a\nb\\u{1b}"

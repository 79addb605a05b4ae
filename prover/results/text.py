"""Small text helpers shared by errors and reports."""

from __future__ import annotations

import re

#: Characters that end a line for ``str.splitlines`` or a terminal beyond the C0/C1
#: controls (U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR), and the bidirectional
#: formatting characters that can reorder what a reader sees (LRM, RLM, ALM, the
#: embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069).
_FORGING = frozenset(
    {0x2028, 0x2029, 0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
)


def escape_control(text: str) -> str:
    """Escape control characters as Rust's ``char::escape_default`` writes them.

    Keeps every rendered message on one line and free of terminal escape sequences: the
    C0 and C1 controls (every line break ``str.splitlines`` knows among them), U+2028,
    U+2029 and the bidirectional controls are written as ``\\u{...}``.
    """
    if _ESCAPED.search(text) is None:
        return text  # the common case, scanned in C
    return _ESCAPED.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _SHORT.get(ch) or f"\\u{{{ord(ch):x}}}"


_SHORT = {"\t": "\\t", "\r": "\\r", "\n": "\\n"}
_ESCAPED = re.compile(
    r"[\x00-\x1f\x7f-\x9f" + "".join(re.escape(chr(code)) for code in sorted(_FORGING)) + "]"
)


def escape_lines(text: str) -> str:
    """Escape ``text`` line by line: its own ``\\n`` stay, nothing else breaks a line."""
    return "\n".join(escape_control(line) for line in text.split("\n"))

"""Small text helpers shared by errors and reports."""

from __future__ import annotations


def escape_control(text: str) -> str:
    """Escape control characters as Rust's ``char::escape_default`` writes them.

    Keeps every rendered message on one line and free of terminal escape sequences.
    """
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\n":
            out.append("\\n")
        elif code < 0x20 or 0x7F <= code <= 0x9F:
            out.append(f"\\u{{{code:x}}}")
        else:
            out.append(ch)
    return "".join(out)

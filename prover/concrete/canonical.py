"""Canonical forms of witness fields (spec §9.8 step 3) and the action domain (§9.1).

A solver model is only published as a counterexample when every string in it is in the
canonical form below, so that what a user reads is exactly what the runtime would see.
Lengths are counted as the reference counts them: UTF-8 bytes for the canonical forms,
code points (Z3 string length) for the action domain.
"""

from __future__ import annotations

import unicodedata

MAX_PATH_LENGTH = 4096
MAX_HOST_LENGTH = 253
MAX_LABEL_LENGTH = 63

_DIGITS = frozenset("0123456789")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_ALNUM = _DIGITS | _LOWER | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEX_UPPER = frozenset("0123456789ABCDEF")
_HEX_ANY = _HEX_UPPER | frozenset("abcdef")
_HOST_CHARS = _LOWER | _DIGITS | frozenset("-_")
# RFC 9110 tchar.
_TCHAR = _ALNUM | frozenset("!#$%&'*+-.^_`|~")
# RFC 3986 unreserved + sub-delims without ";" + ":" "@": what a canonical path may
# carry literally (and so must not percent-encode).
_PCHAR_LITERAL = _ALNUM | frozenset("-._~!$&'()*+,=:@")


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _has_dot_segment(path: str) -> bool:
    return any(segment in (".", "..") for segment in path.split("/"))


def is_canonical_pattern_path(path: str) -> bool:
    """Absolute, no ``//``, no ``.``/``..`` segment (also the policy-side rule)."""
    return path.startswith("/") and "//" not in path and not _has_dot_segment(path)


def is_canonical_binary(binary: str) -> bool:
    """≤ 4096 bytes, canonical absolute path, no control character (Unicode Cc)."""
    return (
        _utf8_length(binary) <= MAX_PATH_LENGTH
        and is_canonical_pattern_path(binary)
        and not any(unicodedata.category(c) == "Cc" for c in binary)
    )


def is_canonical_host(host: str) -> bool:
    """A lower-case DNS name: labels of 1-63 ``[a-z0-9_-]`` not starting or ending
    with ``-``; at most 253 characters in all."""
    if not host or len(host) > MAX_HOST_LENGTH:
        return False
    return all(
        0 < len(label) <= MAX_LABEL_LENGTH
        and all(c in _HOST_CHARS for c in label)
        and not label.startswith("-")
        and not label.endswith("-")
        for label in host.split(".")
    )


def is_http_token(method: str) -> bool:
    """A non-empty RFC 9110 token (``tchar``)."""
    return bool(method) and all(c in _TCHAR for c in method)


def is_upper_http_token(method: str) -> bool:
    """An HTTP token without lower-case letters: the witness methods of the engine
    reading, judged by the runtime exactly as by the model (``sandbox-policy.rego``
    ``method_matches`` upper-cases the request's method; ``l7/rest.rs``
    ``looks_like_http`` needs an upper-case method to open a plain-HTTP tunnel)."""
    return is_http_token(method) and not any("a" <= c <= "z" for c in method)


def _valid_escape(path: str, index: int) -> bool:
    """``path[index]`` is ``%``: upper-case hex that does not encode ``/``, ``;``, a
    control character or a character that may appear literally."""
    digits = path[index + 1 : index + 3]
    if len(digits) != 2 or not all(c in _HEX_ANY for c in digits):
        return False
    if not all(c in _HEX_UPPER for c in digits):
        return False
    decoded = int(digits, 16)
    return not (
        decoded in (0x2F, 0x3B)
        or decoded < 0x20
        or decoded == 0x7F
        or chr(decoded) in _PCHAR_LITERAL
    )


def is_canonical_rest_path(path: str) -> bool:
    """A REST path as the runtime would forward it unchanged.

    Starts with ``/``; ≤ 4096 bytes; printable ASCII only; no ``//``, ``;``, ``?``,
    ``#``; no ``.``/``..`` segment; literal characters limited to ``/`` and RFC 3986
    pchars; every ``%XX`` is upper-case hex and encodes a byte that is not ``/``,
    ``;``, a control character or a character allowed literally.
    """
    if not path.startswith("/") or _utf8_length(path) > MAX_PATH_LENGTH:
        return False
    if any(token in path for token in ("//", ";", "?", "#")):
        return False
    if any(not ("!" <= c <= "~") for c in path) or _has_dot_segment(path):
        return False
    index = 0
    while index < len(path):
        character = path[index]
        if character == "%":
            if not _valid_escape(path, index):
                return False
            index += 3
            continue
        if character != "/" and character not in _PCHAR_LITERAL:
            return False
        index += 1
    return True


def is_action_domain_path(path: str) -> bool:
    """The §9.1 domain of a symbolic REST path (wider than canonical).

    Starts with ``/``; ≤ 4096 characters; none of ``//``, ``/./``, ``/../``, ``;``,
    ``?``, ``#``; is not, and does not end with, ``/.`` or ``/..``.
    """
    return (
        path.startswith("/")
        and len(path) <= MAX_PATH_LENGTH
        and not any(token in path for token in ("//", "/./", "/../", ";", "?", "#"))
        and not path.endswith(("/.", "/.."))
    )


def is_action_domain_binary(binary: str) -> bool:
    """The §9.1 domain of a symbolic binary: matches ``/**``, ≤ 4096 characters."""
    return binary.startswith("/") and len(binary) <= MAX_PATH_LENGTH

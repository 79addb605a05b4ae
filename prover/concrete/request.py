"""A request-target as OpenShell's proxy reads it before any policy sees it.

The runtime canonicalises the path of every inspected request and parses its query
before the Rego policy matches anything (NVIDIA/OpenShell
``crates/openshell-supervisor-network/src/l7/path.rs`` ``canonicalize_request_target``
with its default options, and ``l7/rest.rs`` ``parse_query_params``). The concrete
evaluator in the default semantics judges a REST rule on :func:`canonical_path` of the
request path (``None``: refused, nothing matches); the forward proxy canonicalises
every plain-HTTP request the same way (``proxy.rs`` ``prepare_forward_target``).
"""

from __future__ import annotations

MAX_PATH_BYTES = 4 * 1024
"""``l7/path.rs`` ``MAX_PATH_LEN``."""

_HEX = "0123456789abcdefABCDEF"
_LITERAL = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@"
)
"""``l7/path.rs`` ``is_pchar_unreserved``: bytes emitted literally."""


def _decode_path(raw: str) -> bytes | None:
    """``percent_decode_with_sentinel`` without ``allow_encoded_slash``: a ``%2F`` (any
    case), a bad escape or an escaped control byte refuses the request."""
    out = bytearray()
    index = 0
    while index < len(raw):
        char = raw[index]
        if char != "%":
            out.append(ord(char))
            index += 1
            continue
        digits = raw[index + 1 : index + 3]
        if len(digits) != 2 or any(d not in _HEX for d in digits):
            return None
        byte = int(digits, 16)
        if byte == 0x2F or byte < 0x20 or byte == 0x7F:
            return None
        out.append(byte)
        index += 3
    return bytes(out)


def _resolve(segments: list[bytes]) -> list[bytes] | None:
    """``resolve_dot_segments``: ``..`` above the root refuses; ``//`` collapses."""
    stack: list[bytes] = []
    last = len(segments) - 1
    for position, segment in enumerate(segments):
        if segment == b"..":
            if not stack:
                return None
            stack.pop()
            if position == last:
                stack.append(b"")
            continue
        if segment == b".":
            if position == last:
                stack.append(b"")
            continue
        if not segment and position != last:
            continue
        stack.append(segment)
    return stack


def canonical_path(raw: str) -> str | None:
    """The canonical form of a request path, or ``None`` when the runtime refuses it.

    Mirrors ``canonicalize_request_target`` (default options: ``%2F`` refused, ``;params``
    stripped) on an origin-form path without query or fragment: control bytes, non-ASCII,
    bad escapes, ``%2F``, traversal above the root and over-long paths refuse; unreserved
    escapes are decoded, dot segments resolved, ``//`` collapsed, ``;params`` dropped,
    everything else re-encoded as upper-case ``%XX``.
    """
    if any(ord(c) < 0x20 or ord(c) >= 0x7F for c in raw) or "#" in raw or "?" in raw:
        return None
    path = raw or "/"
    if not path.startswith("/") or len(path) > MAX_PATH_BYTES:
        return None
    decoded = _decode_path(path)
    if decoded is None:
        return None
    segments = [segment.split(b";", 1)[0] for segment in decoded[1:].split(b"/")]
    resolved = _resolve(segments)
    if resolved is None or any(segment in (b".", b"..") for segment in resolved):
        return None
    text = "/".join(
        "".join(chr(b) if chr(b) in _LITERAL and b != ord(";") else f"%{b:02X}" for b in s)
        for s in resolved
    )
    return "/" + text


def _decode_query_component(raw: str) -> str | None:
    """``l7/rest.rs`` ``decode_query_component``: ``+`` is a space, ``%XX`` a byte, the
    result must be UTF-8."""
    out = bytearray()
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "+":
            out.append(0x20)
            index += 1
        elif char == "%":
            digits = raw[index + 1 : index + 3]
            if len(digits) != 2 or any(d not in _HEX for d in digits):
                return None
            out.append(int(digits, 16))
            index += 3
        else:
            out.extend(char.encode("utf-8"))
            index += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def parse_query(raw: str) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """``parse_query_params``: ``&``-separated pairs, a bare ``k`` is ``k=""``, repeated
    keys collect their values in order; ``None`` when a component does not decode."""
    params: dict[str, list[str]] = {}
    for pair in raw.split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        decoded_key, decoded_value = _decode_query_component(key), _decode_query_component(value)
        if decoded_key is None or decoded_value is None:
            return None
        params.setdefault(decoded_key, []).append(decoded_value)
    return tuple((key, tuple(values)) for key, values in params.items())

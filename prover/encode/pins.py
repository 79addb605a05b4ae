"""Regular languages of the canonical witness strings (spec §9.8 step 3): a canonical
DNS host, an HTTP-token method, a canonical REST path and canonical binaries.

They narrow the action domain, so they are only used by the witness search, *after* the
unrestricted query found an action: "no canonical string" there means "no readable
witness here", never "contained". Validation of the decoded witness stays the safety
net. The tests compare each language with the concrete checks in
``prover.concrete.canonical``.
"""

from __future__ import annotations

import string

import z3

from prover.encode.action import MAX_BINARY_LENGTH, SymbolicAction

MAX_HOST_LENGTH = 253
_HOST_CHARS = string.ascii_lowercase + string.digits + "_"
_TOKEN_CHARS = string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~"
_UPPER_TOKEN_CHARS = string.ascii_uppercase + string.digits + "!#$%&'*+-.^_`|~"
"""Engine reading: the Rego upper-cases the request method (``sandbox-policy.rego``
``method_matches``) and a plain-HTTP tunnel's first request must start with an
upper-case standard method (``l7/rest.rs`` ``looks_like_http``), so a witness names an
upper-case method, which the runtime judges as the model does."""
_PCHARS = string.ascii_letters + string.digits + "-._~!$&'()*+,=:@"
_HEX = "0123456789ABCDEF"


def _char_class(ctx: z3.Context, chars: str) -> z3.ReRef:
    """A regex for one character of ``chars``, as a union of contiguous ranges."""
    codes = sorted({ord(c) for c in chars})
    runs: list[tuple[int, int]] = []
    for code in codes:
        if runs and runs[-1][1] + 1 == code:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    parts = [
        z3.Re(z3.StringVal(chr(lo), ctx)) if lo == hi else z3.Range(chr(lo), chr(hi), ctx)
        for lo, hi in runs
    ]
    return parts[0] if len(parts) == 1 else z3.Union(*parts)


def _percent_escape_allowed(byte: int) -> bool:
    """Whether ``%XX`` for ``byte`` is canonical: not ``/``, ``;``, a control character
    or a character that must appear literally."""
    if byte in (ord("/"), ord(";")) or byte < 0x20 or byte == 0x7F:
        return False
    return not (byte < 0x80 and chr(byte) in _PCHARS)


def _percent_escapes(ctx: z3.Context) -> z3.ReRef:
    alternatives: list[z3.ReRef] = []
    for high in _HEX:
        lows = [low for low in _HEX if _percent_escape_allowed(int(high + low, 16))]
        if lows:
            alternatives.append(
                z3.Concat(z3.Re(z3.StringVal("%" + high, ctx)), _char_class(ctx, "".join(lows)))
            )
    return z3.Union(*alternatives)


PIN_LENGTHS = {"host": MAX_HOST_LENGTH, "binary": MAX_BINARY_LENGTH, "ancestor": MAX_BINARY_LENGTH}


def pin_regexes(action: SymbolicAction) -> dict[str, z3.ReRef]:
    """Per string field, a regex of canonical values (lengths aside: see
    :data:`PIN_LENGTHS`). Method and path are included even for an L4 witness."""
    ctx = action.ctx
    host_char = _char_class(ctx, _HOST_CHARS)
    inner = z3.Union(host_char, z3.Re(z3.StringVal("-", ctx)))
    label = z3.Concat(host_char, z3.Option(z3.Concat(z3.Star(inner), host_char)))
    path_char = z3.Union(_char_class(ctx, _PCHARS + "/"), _percent_escapes(ctx))
    regexes = {
        "host": z3.Concat(label, z3.Star(z3.Concat(z3.Re(z3.StringVal(".", ctx)), label))),
        "method": z3.Plus(_char_class(ctx, _UPPER_TOKEN_CHARS if action.engine else _TOKEN_CHARS)),
        "path": z3.Concat(z3.Re(z3.StringVal("/", ctx)), z3.Star(path_char)),
    }
    if action.identity:
        # Printable ASCII without "/" (the separator) and "\\" (kept out so that no
        # escape-like text can reach the string round-trip).
        segment_chars = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "/\\")
        binary = action.globs.normalized_path(_char_class(ctx, segment_chars))
        regexes["binary"] = regexes["ancestor"] = binary
    return regexes

"""``/etc/passwd`` and ``/etc/group`` read as the OpenShell runtime reads them.

OpenShell resolves the image's ``USER`` itself (``crates/openshell-supervisor-process/src/
identity.rs`` at ``2f7fb65``: ``find_unique``, ``parse_passwd``, ``parse_group``,
``read_account_file``): the file must be valid UTF-8 of at most 1 MiB; it is split into
lines at ``\\n`` (Rust's ``str::lines``, which also drops a trailing ``\\r``); empty lines and
lines starting with ``#`` are skipped; any other line longer than 8 KiB, or with a field
longer than 1024 bytes, fails every lookup in the file; the line a lookup selects (by its
first field, or by a numeric third field for a uid) must have exactly 7 fields (passwd) or
4 (group) with decimal ids, and a lookup selecting two lines is ambiguous, an error.

So a name is listed only when exactly one line carries it and that line is well formed; a
file the runtime would refuse yields no names at all. What is left out is unknown to the
prover, never guessed.
"""

from __future__ import annotations

from prover.environment.document import MAX_ID, MAX_NAMES

MAX_ACCOUNT_FILE_BYTES = 1024 * 1024
MAX_LINE_BYTES = 8 * 1024
MAX_FIELD_BYTES = 1024
PASSWD_FIELDS = 7
GROUP_FIELDS = 4


def _u32(text: str) -> int | None:
    """Rust's ``str::parse::<u32>``: an optional ``+`` then ASCII digits."""
    digits = text[1:] if text.startswith("+") else text
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    value = int(digits)
    return value if value <= 0xFFFF_FFFF else None


def _lines(text: str | None) -> list[list[str]] | None:
    """The split lines the runtime looks at, or None when it would refuse the file."""
    if text is None:
        return None
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None  # not valid UTF-8 (collectors decode strictly and pass None)
    if size > MAX_ACCOUNT_FILE_BYTES:
        return None
    rows: list[list[str]] = []
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line or line.startswith("#"):
            continue
        if len(line.encode()) > MAX_LINE_BYTES:
            return None
        fields = line.split(":")
        if any(len(f.encode()) > MAX_FIELD_BYTES for f in fields):
            return None
        rows.append(fields)
    return rows


def parse_ids(text: str | None, fields: int) -> dict[str, int]:
    """``name -> id`` for every name one well-formed line of ``fields`` fields carries."""
    rows = _lines(text)
    if rows is None:
        return {}
    count: dict[str, int] = {}
    for row in rows:
        count[row[0]] = count.get(row[0], 0) + 1
    found: dict[str, int] = {}
    for row in rows:
        name = row[0]
        if count[name] != 1 or len(row) != fields or not name:
            continue
        number = _u32(row[2])
        if fields == PASSWD_FIELDS and _u32(row[3]) is None:
            continue  # parse_passwd parses the gid too
        if number is not None and number <= MAX_ID:
            found[name] = number
            if len(found) >= MAX_NAMES:
                break
    return found


class Unknown(Exception):
    """The runtime would fail this lookup (malformed or ambiguous entry, refused file)."""


def primary_gid(passwd: str | None, user: str) -> int | None:
    """The primary gid of ``user`` (a name, or a uid when numeric) as the runtime finds it:
    None when no line matches; :class:`Unknown` when the runtime would fail."""
    rows = _lines(passwd)
    if rows is None:
        raise Unknown("the runtime would refuse /etc/passwd")
    uid = _u32(user)
    if uid is not None:
        matches = [row for row in rows if len(row) > 2 and _u32(row[2]) == uid]
    else:
        matches = [row for row in rows if row[0] == user]
    if not matches:
        return None
    if len(matches) > 1 or len(matches[0]) != PASSWD_FIELDS:
        raise Unknown(f"/etc/passwd has {'several' if len(matches) > 1 else 'a malformed'} entry")
    gid = _u32(matches[0][3])
    if gid is None or _u32(matches[0][2]) is None:
        raise Unknown("/etc/passwd has a malformed entry")
    return gid

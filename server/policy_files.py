"""Reading policy files for the command line, with the reference's rules (spec §12).

A policy path must name a regular file. It is opened non-blocking so that a FIFO (or a
device) is refused at once instead of hanging the check; at most the input limit plus
one byte is read, so a huge or endless file cannot exhaust memory; the bytes must be
UTF-8. Every failure is a :class:`PolicyFileError` whose message is the ``reason`` of
the CLI's ``error`` result.
"""

from __future__ import annotations

import os
import stat

#: The reference's input limit for one policy text (4 MiB).
MAX_POLICY_BYTES = 4 * 1024 * 1024

_CHUNK = 1 << 16


class PolicyFileError(Exception):
    """A policy file could not be read; ``str(exc)`` is the user-facing reason."""


def os_error_text(exc: OSError) -> str:
    """``<strerror> (os error <errno>)``, the way the reference prints an I/O error."""
    if exc.errno is None:
        return str(exc)
    return f"{exc.strerror or os.strerror(exc.errno)} (os error {exc.errno})"


def read_policy_file(path: str) -> str:
    """Return the text of the policy file at ``path`` or raise :class:`PolicyFileError`."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise PolicyFileError(f"cannot open '{path}': {os_error_text(exc)}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PolicyFileError(f"policy path '{path}' is not a regular file")
        data = _read_at_most(fd, path, MAX_POLICY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyFileError(f"policy file exceeds the {MAX_POLICY_BYTES}-byte input limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyFileError("policy file is not valid UTF-8") from exc


def _read_at_most(fd: int, path: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        try:
            chunk = os.read(fd, min(_CHUNK, limit - total))
        except OSError as exc:
            raise PolicyFileError(f"cannot read '{path}': {os_error_text(exc)}") from exc
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)

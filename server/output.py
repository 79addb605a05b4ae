"""Writing command output: UTF-8 bytes, JSON formatting, and failing cleanly on a closed pipe."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO


def render_json(document: Any) -> str:
    """Pretty JSON (two-space indent) with a trailing newline, non-ASCII kept as UTF-8."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write(stream: TextIO, text: str) -> bool:
    """Write ``text`` to ``stream`` and flush; return False if the write failed.

    Bytes go to the underlying buffer when there is one, so that a locale without
    UTF-8 cannot mangle policy paths or reasons; ``surrogateescape`` writes back the
    original bytes of a path that was not valid UTF-8 on the command line.
    """
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            stream.flush()
            buffer.write(text.encode("utf-8", "surrogateescape"))
            buffer.flush()
        else:
            stream.write(text)
            stream.flush()
    except (OSError, ValueError):
        _silence(stream)
        return False
    return True


def _silence(stream: TextIO) -> None:
    """After a broken pipe, point the stream at /dev/null so the exit-time flush is quiet."""
    if stream is sys.stdout or stream is sys.stderr:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

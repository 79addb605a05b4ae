"""Reading policy files for ``check``: regular files only, 4 MiB, UTF-8 (spec §12)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from server.policy_files import MAX_POLICY_BYTES, PolicyFileError, read_policy_file


def _reason(path: str) -> str:
    with pytest.raises(PolicyFileError) as info:
        read_policy_file(path)
    return str(info.value)


def test_a_regular_utf8_file_is_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\n# é\n", encoding="utf-8")
    assert read_policy_file(str(path)) == "version: 1\n# é\n"


def test_a_file_of_exactly_the_limit_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * MAX_POLICY_BYTES)
    assert len(read_policy_file(str(path))) == MAX_POLICY_BYTES


def test_a_file_one_byte_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * (MAX_POLICY_BYTES + 1))
    assert _reason(str(path)) == "policy file exceeds the 4194304-byte input limit"


def test_a_missing_file_names_the_path_and_the_os_error(tmp_path: Path) -> None:
    path = str(tmp_path / "missing.yaml")
    assert _reason(path) == f"cannot open '{path}': No such file or directory (os error 2)"


def test_non_utf8_bytes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"version: 1\n# \xe9\n")
    assert _reason(str(path)) == "policy file is not valid UTF-8"


def test_a_directory_is_not_a_regular_file(tmp_path: Path) -> None:
    assert _reason(str(tmp_path)) == f"policy path '{tmp_path}' is not a regular file"


def test_a_fifo_is_refused_at_once_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert _reason(str(fifo)) == f"policy path '{fifo}' is not a regular file"
    assert time.monotonic() - started < 5.0


def test_dev_null_is_not_a_regular_file() -> None:
    assert _reason(os.devnull) == f"policy path '{os.devnull}' is not a regular file"

"""Process settings the server applies before serving."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from tests.load.server_process import REPO_ROOT

PROBE = "from server.serving import limit_malloc_arenas; print(limit_malloc_arenas())"


def _run(env: dict[str, str]) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    environment.update({"PYTHONPATH": REPO_ROOT, **env})
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt arenas are glibc's")
def test_the_malloc_arena_cap_applies_on_glibc_unless_the_operator_set_one() -> None:
    assert _run({}) == "True"
    assert _run({"MALLOC_ARENA_MAX": "4"}) == "False"

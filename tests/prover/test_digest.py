"""SHA-256 without OpenSSL for small texts: the same digests as hashlib."""

from __future__ import annotations

import hashlib
import random

import pytest

from prover.results import digest


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 4096, digest.LARGE - 1, digest.LARGE, 10**6])
def test_the_digest_is_hashlibs(size: int) -> None:
    data = random.Random(size).randbytes(size)
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_small_texts_need_no_openssl() -> None:
    assert digest._BUILTIN is not None

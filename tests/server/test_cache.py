"""The result cache of ``check_boundary``: bounded, deterministic results only, per server."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

import prover.run.runner
from prover.api import BoundaryCheck
from prover.results import CheckOutcome, ReasonCode, Receipt
from prover.run.budget import Budget
from server import cache as cache_module
from server.app import create_server
from server.cache import (
    CACHE_SIZE_ENV,
    DEFAULT_CACHE_SIZE,
    ResultCache,
    cache_key,
    cache_of,
    configured_cache_size,
    is_cacheable,
    set_cache_size,
)
from server.cli import main
from server.commands import serve

WITHIN = {
    "candidate": "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n",
    "boundary": "version: 1\nfilesystem_policy:\n  read_only: [/usr, /etc]\n",
}
EXCEEDS = {"candidate": WITHIN["boundary"], "boundary": WITHIN["candidate"]}
INVALID = {"candidate": "version: 2\n", "boundary": "version: 1\n"}


def _document(result: str, reason_code: str | None = None) -> dict[str, Any]:
    return {"result": result, "reason_code": reason_code, "receipt": {"elapsed_ms": 1.0}}


@pytest.fixture(autouse=True)
def default_size() -> Iterator[None]:
    set_cache_size(None)
    yield
    set_cache_size(None)


# -- keys -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param(("a", "b", 10), ("a", "b", 11), id="timeout"),
        pytest.param(("a", "b", 10), ("b", "a", 10), id="swapped-policies"),
        pytest.param(("ab", "c", 10), ("a", "bc", 10), id="shifted-boundary"),
        pytest.param(("a", "b", 10), (b"a", "b", 10), id="bytes-vs-text"),
        pytest.param(("version: 1\n", "x", 10), ("version: 1\n ", "x", 10), id="whitespace"),
    ],
)
def test_different_inputs_or_options_have_different_keys(
    first: tuple[Any, Any, int], second: tuple[Any, Any, int]
) -> None:
    assert cache_key(*first) != cache_key(*second)


def test_the_key_of_the_same_inputs_is_stable_and_a_sha256() -> None:
    key = cache_key("version: 1\n", "version: 1\n", 2000)
    assert key == cache_key("version: 1\n", "version: 1\n", 2000)
    assert len(key) == 64 and int(key, 16) >= 0


def test_a_lone_surrogate_in_a_policy_text_still_has_a_key() -> None:
    assert cache_key("version: 1\n#\ud800\n", "version: 1\n", 1) != cache_key(
        "version: 1\n#\udc00\n", "version: 1\n", 1
    )


# -- what is kept -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "reason_code", "kept"),
    [
        ("within_boundary", None, True),
        ("exceeds_boundary", None, True),
        ("unsupported", "unsupported_policy_shape", True),
        ("error", "invalid_input", True),
        ("inconclusive", "solver_timeout", False),
        ("inconclusive", "cancelled", False),
        ("inconclusive", "resource_limit", False),
        ("inconclusive", "invalid_witness", False),
        ("unsupported", "solver_timeout", False),
    ],
)
def test_only_results_that_depend_on_the_inputs_alone_are_cached(
    result: str, reason_code: str | None, kept: bool
) -> None:
    cache = ResultCache(4)
    document = _document(result, reason_code)
    assert is_cacheable(document) is kept
    assert cache.put("k", "text", document) is kept
    assert (cache.get("k") is not None) is kept


def test_the_cache_keeps_at_most_its_size_and_evicts_the_least_recently_used() -> None:
    cache = ResultCache(2)
    for key in ("a", "b"):
        cache.put(key, key, _document("within_boundary"))
    assert cache.get("a") is not None  # "a" is now the most recently used
    cache.put("c", "c", _document("within_boundary"))
    assert len(cache) == 2
    assert cache.get("b") is None
    assert cache.get("a") is not None and cache.get("c") is not None
    assert (cache.hits, cache.misses) == (3, 1)


def test_a_hit_is_a_private_copy_that_callers_cannot_corrupt() -> None:
    cache = ResultCache(1)
    cache.put("k", "text", _document("within_boundary"))
    first = cache.get("k")
    assert first is not None
    first.document["result"] = "exceeds_boundary"
    first.document["receipt"]["elapsed_ms"] = 99.0
    again = cache.get("k")
    assert again is not None
    assert again.document == _document("within_boundary")


def test_a_cache_of_size_zero_stores_nothing() -> None:
    cache = ResultCache(0)
    assert not cache.enabled
    assert cache.put("k", "text", _document("within_boundary")) is False
    assert cache.get("k") is None


def test_concurrent_puts_never_exceed_the_size() -> None:
    cache = ResultCache(8)

    def fill(prefix: str) -> None:
        for index in range(500):
            cache.put(f"{prefix}{index}", "t", _document("within_boundary"))
            cache.get(f"{prefix}{index // 2}")

    threads = [threading.Thread(target=fill, args=(name,)) for name in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(cache) == 8


# -- configuration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        (None, DEFAULT_CACHE_SIZE),
        ("", DEFAULT_CACHE_SIZE),
        ("0", 0),
        (" 17 ", 17),
        ("-1", DEFAULT_CACHE_SIZE),
        ("lots", DEFAULT_CACHE_SIZE),
    ],
)
def test_the_cache_size_comes_from_the_environment_or_the_default(
    monkeypatch: pytest.MonkeyPatch, environment: str | None, expected: int
) -> None:
    if environment is None:
        monkeypatch.delenv(CACHE_SIZE_ENV, raising=False)
    else:
        monkeypatch.setenv(CACHE_SIZE_ENV, environment)
    assert configured_cache_size() == expected


def test_an_explicit_size_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_SIZE_ENV, "5")
    set_cache_size(3)
    assert configured_cache_size() == 3
    assert cache_of(create_server()) is not None
    server = create_server()
    cache = cache_of(server)
    assert cache is not None and cache.max_entries == 3


@pytest.mark.parametrize("value", ["-1", "x", "1.5"])
def test_serve_refuses_an_invalid_cache_size(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--cache-size", value]) == 2
    captured = capsys.readouterr()
    assert "invalid cache size" in captured.err
    assert captured.out == ""


# -- through the tool -----------------------------------------------------------------------


class CountingCore:
    """Counts the checks that really ran; optionally answers inconclusive."""

    def __init__(self, real: Any, inconclusive: bool = False) -> None:
        self.real = real
        self.inconclusive = inconclusive
        self.calls = 0

    def __call__(self, candidate: str, boundary: str, *, budget: Budget, **_: Any) -> BoundaryCheck:
        self.calls += 1
        if not self.inconclusive:
            return self.real(candidate, boundary, budget=budget)
        outcome = CheckOutcome.inconclusive(ReasonCode.SOLVER_TIMEOUT, "solver timeout elapsed")
        receipt = Receipt(
            candidate_sha256=None, boundary_sha256=None, z3_version="x", elapsed_ms=1.0
        )
        return BoundaryCheck(outcome=outcome, receipt=receipt)


def _install(monkeypatch: pytest.MonkeyPatch, inconclusive: bool = False) -> CountingCore:
    core = CountingCore(prover.run.runner.check_boundary, inconclusive)
    monkeypatch.setattr("prover.run.runner.check_boundary", core)
    return core


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(
    "arguments", [WITHIN, EXCEEDS, INVALID], ids=["within", "exceeds", "error"]
)
async def test_a_repeated_check_is_answered_from_the_cache_with_an_identical_result(
    mode: str, arguments: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    core = _install(monkeypatch)
    server = create_server()
    async with Client(server, mode=mode) as client:
        first = await client.call_tool("check_boundary", arguments)
        second = await client.call_tool("check_boundary", arguments)
    cache = cache_of(server)
    assert cache is not None
    assert core.calls == 1
    assert (cache.hits, len(cache)) == (1, 1)
    assert not second.is_error
    assert second.structured_content == first.structured_content
    assert second.content == first.content


@pytest.mark.anyio
async def test_an_inconclusive_result_is_never_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    core = _install(monkeypatch, inconclusive=True)
    server = create_server()
    async with Client(server) as client:
        results = [await client.call_tool("check_boundary", WITHIN) for _ in range(3)]
    assert core.calls == 3
    assert [r.structured_content["result"] for r in results if r.structured_content] == [
        "inconclusive"
    ] * 3
    cache = cache_of(server)
    assert cache is not None and len(cache) == 0 and cache.hits == 0


@pytest.mark.anyio
async def test_the_same_policies_with_another_timeout_are_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    core = _install(monkeypatch)
    async with Client(create_server()) as client:
        await client.call_tool("check_boundary", {**WITHIN, "timeout_ms": 5000})
        await client.call_tool("check_boundary", {**WITHIN, "timeout_ms": 5001})
    assert core.calls == 2


@pytest.mark.anyio
async def test_each_server_has_its_own_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    core = _install(monkeypatch)
    for _ in range(2):
        async with Client(create_server()) as client:
            await client.call_tool("check_boundary", WITHIN)
    assert core.calls == 2


@pytest.mark.anyio
async def test_a_cache_size_of_zero_disables_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_SIZE_ENV, "0")
    core = _install(monkeypatch)
    server = create_server()
    async with Client(server) as client:
        first = await client.call_tool("check_boundary", WITHIN)
        second = await client.call_tool("check_boundary", WITHIN)
    assert core.calls == 2
    assert first.structured_content is not None and second.structured_content is not None
    assert first.structured_content["result"] == second.structured_content["result"]


def test_the_module_exports_what_the_tool_uses() -> None:
    for name in ("attach_cache", "cache_for_request", "cache_key_async"):
        assert name in cache_module.__all__


def test_serve_names_the_same_environment_variable_as_the_cache(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert serve.CACHE_SIZE_ENV == CACHE_SIZE_ENV
    assert main(["serve", "--help"]) == 0
    assert CACHE_SIZE_ENV in capsys.readouterr().out.replace("\n", "").replace(" ", "")


def test_building_the_command_line_does_not_import_the_cache() -> None:
    code = (
        "import sys; from server.cli import build_parser; build_parser(); "
        "print('server.cache' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "False"

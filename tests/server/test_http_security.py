"""Host allow-lists, loopback detection and the bearer-token middleware."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from server.http_security import (
    BearerTokenMiddleware,
    allowed_hosts,
    allowed_origins,
    is_loopback,
    is_wildcard,
    parse_host_list,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("example.com", False),
    ],
)
def test_loopback_addresses_are_recognised(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_wildcard_addresses_are_recognised() -> None:
    assert is_wildcard("0.0.0.0") and is_wildcard("::") and is_wildcard("[::]")
    assert not is_wildcard("127.0.0.1") and not is_wildcard("example.com")


def test_loopback_serving_allows_only_loopback_names_on_the_bound_port() -> None:
    assert allowed_hosts("127.0.0.1", 8123, []) == [
        "127.0.0.1:8123",
        "localhost:8123",
        "[::1]:8123",
    ]


def test_a_specific_address_allows_itself_and_the_names_given() -> None:
    hosts = allowed_hosts("10.0.0.5", 8000, ["prover.internal:8000"])
    assert hosts == ["10.0.0.5:8000", "prover.internal:8000"]


def test_an_ipv6_address_is_bracketed_in_host_headers() -> None:
    assert allowed_hosts("fd00::5", 8000, []) == ["[fd00::5]:8000"]


def test_a_wildcard_bind_allows_loopback_names_the_host_name_and_extra_names() -> None:
    import socket

    hosts = allowed_hosts("0.0.0.0", 8000, ["policy-prover.tools.svc:*"])
    assert "127.0.0.1:8000" in hosts
    assert f"{socket.gethostname()}:8000" in hosts
    assert hosts[-1] == "policy-prover.tools.svc:*"


def test_origins_allow_local_tools_and_the_allowed_hosts() -> None:
    origins = allowed_origins(["10.0.0.5:8000"])
    assert "http://localhost:*" in origins
    assert "https://10.0.0.5:8000" in origins and "http://10.0.0.5:8000" in origins


def test_host_lists_from_the_environment_are_split_on_commas() -> None:
    assert parse_host_list(" a:1, b:* ,,") == ["a:1", "b:*"]
    assert parse_host_list(None) == []


async def _inner(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"inner"})


async def _request(path: str, headers: dict[str, str]) -> httpx2.Response:
    app = BearerTokenMiddleware(_inner, "s3cret")
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.get(path, headers=headers)


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/mcp", {"Authorization": "Bearer s3cret"}, 200),
        ("/mcp", {"authorization": "Bearer s3cret"}, 200),
        ("/mcp", {}, 401),
        ("/mcp", {"Authorization": "Bearer s3cre"}, 401),
        ("/mcp", {"Authorization": "Basic s3cret"}, 401),
        ("/sse", {}, 401),
        ("/messages/", {}, 401),
        ("/health", {}, 200),
        ("/health/", {}, 401),
    ],
)
async def test_the_token_middleware_guards_everything_but_health(
    path: str, headers: dict[str, str], status: int, anyio_backend: str
) -> None:
    response = await _request(path, headers)
    assert response.status_code == status
    if status == 401:
        assert response.json()["error"] == "unauthorized"
        assert response.headers["www-authenticate"].startswith("Bearer")
    else:
        assert response.content == b"inner"

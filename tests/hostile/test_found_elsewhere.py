"""Smaller findings of issue 14: the token middleware on other scopes and on
/.well-known, and allowed_ips forms only Python accepts."""

from __future__ import annotations

from typing import Any

import pytest

from prover.api import check_boundary
from prover.results import Verdict
from server.http_security import BearerTokenMiddleware

pytestmark = pytest.mark.anyio


async def _run(scope: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    reached = False
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal reached
        reached = True

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    await BearerTokenMiddleware(app, "secret")(scope, receive, send)
    return sent, reached


async def test_a_websocket_scope_never_reaches_the_app(anyio_backend: str) -> None:
    sent, reached = await _run({"type": "websocket", "path": "/mcp", "headers": []})
    assert not reached
    assert sent == [{"type": "websocket.close", "code": 1008}]


async def test_well_known_paths_are_404_not_401(anyio_backend: str) -> None:
    scope = {"type": "http", "path": "/.well-known/oauth-protected-resource", "headers": []}
    sent, reached = await _run(scope)
    assert not reached
    assert sent[0]["status"] == 404
    assert all(name != b"www-authenticate" for name, _ in sent[0]["headers"])


async def test_health_and_lifespan_pass_and_mcp_needs_the_token(anyio_backend: str) -> None:
    assert (await _run({"type": "lifespan"}))[1]
    assert (await _run({"type": "http", "path": "/health", "headers": []}))[1]
    sent, reached = await _run({"type": "http", "path": "/mcp", "headers": []})
    assert not reached and sent[0]["status"] == 401


@pytest.mark.parametrize(
    "entry", ["2001:db8::1%eth0", "fe80::1%1/64", "8.8.8.0/255.255.255.0", "10.0.0.0/0.0.0.255"]
)
def test_python_only_allowed_ips_forms_are_invalid(entry: str) -> None:
    policy = (
        "version: 1\nnetwork_policies:\n  r:\n    endpoints:\n"
        f"      - {{host: api.example.com, port: 443, allowed_ips: ['{entry}']}}\n"
        "    binaries:\n      - {path: /usr/bin/curl}\n"
    )
    # Identical policies are within each other under the extended reading whatever they
    # contain, so the entry is checked where it is not shared: against a boundary
    # without it, and in the reference reading.
    boundary = policy.replace(f", allowed_ips: ['{entry}']", "")
    for check in (
        check_boundary(policy, boundary, timeout_ms=10_000),
        check_boundary(policy, policy, timeout_ms=10_000, reference_semantics=True),
    ):
        assert check.outcome.verdict is not Verdict.WITHIN
        assert check.outcome.counterexample is None
        assert "allowed_ips" in (check.outcome.reason or "")


async def test_several_tokens_each_name_a_client(anyio_backend: str) -> None:
    from prover.run.admission import current_client

    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(current_client.get())

    async def send(message: Any) -> None:
        seen.append(message.get("status"))

    middleware = BearerTokenMiddleware(app, "first, second")
    for token in (b"first", b"second", b"third", b"first, second"):
        scope = {
            "type": "http",
            "path": "/mcp",
            "headers": [(b"authorization", b"Bearer " + token)],
        }
        await middleware(scope, _no_receive, send)
    assert seen[:2] == [("token", 0), ("token", 1)]
    assert seen[2:] == [401, None, 401, None]  # start (401) and body, for each refusal


async def _no_receive() -> dict[str, Any]:
    return {"type": "http.disconnect"}


def test_identical_policies_are_within_and_ones_the_runtime_refuses_are_errors() -> None:
    # validate_sandbox_policy does not parse allowed_ips (openshell-validate: no
    # violation), so the runtime runs this policy, and identical ones are alike.
    policy = (
        "version: 1\nnetwork_policies:\n  r:\n    endpoints:\n"
        "      - {host: api.example.com, port: 443, allowed_ips: ['10.0.0.1%eth0']}\n"
        "    binaries:\n      - {path: /usr/bin/curl}\n"
    )
    outcome = check_boundary(policy, policy, timeout_ms=10_000).outcome
    assert outcome.verdict is Verdict.WITHIN
    refused = policy.replace("allowed_ips: ['10.0.0.1%eth0']", "protocol: rest")
    outcome = check_boundary(refused, refused, timeout_ms=10_000).outcome
    assert outcome.verdict is Verdict.ERROR
    assert "protocol requires rules or access to define allowed traffic" in (outcome.reason or "")

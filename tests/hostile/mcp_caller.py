"""A synchronous ``tools/call`` through the SDK's in-memory client, for hypothesis tests.

Hypothesis runs test functions synchronously, so the client lives in an anyio blocking
portal (an event loop in a thread) for the whole campaign and each call is sent to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from mcp import Client

from server.app import create_server
from tests.hostile.oracles import ToolCall


@contextmanager
def tool_caller(mode: str = "auto") -> Iterator[tuple[ToolCall, dict[str, dict[str, Any]]]]:
    """``(call, schemas)``: ``call(name, arguments, limit_s)`` and each tool's input schema."""
    with start_blocking_portal(backend="asyncio") as portal:
        with portal.wrap_async_context_manager(Client(create_server(), mode=mode)) as client:

            async def list_schemas() -> dict[str, dict[str, Any]]:
                tools = (await client.list_tools()).tools
                return {tool.name: dict(tool.input_schema) for tool in tools}

            async def call_async(name: str, arguments: dict[str, Any], limit_s: float) -> Any:
                with anyio.fail_after(limit_s):
                    return await client.call_tool(name, arguments)

            def call(name: str, arguments: dict[str, Any], limit_s: float) -> Any:
                return portal.call(call_async, name, arguments, limit_s)

            yield call, portal.call(list_schemas)

"""HTTP clients that connect from a chosen loopback address.

Without bearer tokens the server names a client by its address (server.client_key), so
two hosts are modelled on one machine by two loopback source addresses (127.0.0.1 and
127.0.0.2: Linux routes all of 127.0.0.0/8 to the loopback interface).
"""

from __future__ import annotations

from typing import Any

import httpx2


def http_client_from(source: str) -> Any:
    """An MCP ``httpx_client_factory`` whose connections leave from ``source``."""

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout or httpx2.Timeout(30, read=600),
            auth=auth,
            transport=httpx2.AsyncHTTPTransport(local_address=source),
        )

    return factory

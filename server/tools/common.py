"""What every tool module shares: annotations, the timeout argument, progress, failures."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

log = logging.getLogger(__name__)

#: How often a slow call notifies a client that asked for progress.
PROGRESS_EVERY_S = 1.0


def read_only_annotations(title: str) -> ToolAnnotations:
    """Every tool only reads its arguments: read-only, idempotent, closed-world."""
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )


def timeout_argument(maximum_ms: int, what: str) -> Any:
    """The ``timeout_ms`` argument's type: 1 to ``maximum_ms`` milliseconds of ``what``."""
    return Annotated[
        int,
        Field(
            ge=1,
            le=maximum_ms,
            description=f"Time limit of {what} (ms).",
        ),
    ]


def internal_error(exc: BaseException) -> CallToolResult:
    """The tool result of a failure of the server itself: ``isError``, never a verdict."""
    return CallToolResult(
        content=[
            TextContent(
                type="text",
                text=(
                    f"policy-prover internal error: {type(exc).__name__}: {exc}. "
                    "The check did not complete, so the candidate is NOT verified; "
                    "treat this as a failure and retry later or report it."
                ),
            )
        ],
        is_error=True,
    )


def progress_reporter(ctx: Context, timeout_ms: int, doing: str) -> Callable[[], Awaitable[None]]:
    """What a tool passes as ``while_slow`` (:func:`prover.run.runner.run_in_worker`): once
    the call has taken :data:`~prover.run.runner.SLOW_AFTER_S`, tell a client that asked for
    progress that it is still ``doing`` it, every :data:`PROGRESS_EVERY_S`. A fast call
    sends nothing and starts no task."""
    started = time.monotonic()

    async def report() -> None:
        while True:
            elapsed_ms = (time.monotonic() - started) * 1000.0
            try:
                await ctx.report_progress(
                    min(elapsed_ms, float(timeout_ms)),
                    float(timeout_ms),
                    f"{doing}: {elapsed_ms / 1000.0:.1f} s of at most {timeout_ms / 1000.0:.1f} s",
                )
            except anyio.get_cancelled_exc_class():
                raise
            except Exception:  # progress is best effort; the result matters
                log.debug("could not send a progress notification", exc_info=True)
                return
            await anyio.sleep(PROGRESS_EVERY_S)

    return report

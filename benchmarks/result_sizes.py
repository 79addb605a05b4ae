"""What an agent pays in characters: ``tools/list`` and explain results, compact and full.

``tools/list`` is counted as the stdio server writes it (one JSON-RPC line); a tool result
as its text content plus its structured content serialised as JSON.

Usage: ``python -m benchmarks.result_sizes`` (prints Markdown).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import Client

from server.app import create_server
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS
from tests.server.test_result_sizes import BOUNDARY as ONE_BOUNDARY
from tests.server.test_result_sizes import ONE_VIOLATION, _tools_list_line

FIVE_VIOLATIONS = THREE_VIOLATIONS.replace(
    "  read_write: [/data]\n", "  read_write: [/data, /srv, /opt]\n"
)


def _size(result: Any) -> int:
    text = "".join(getattr(block, "text", "") for block in result.content)
    return len(text) + len(json.dumps(result.structured_content, ensure_ascii=False))


async def _explain_sizes() -> list[tuple[str, int, int, int]]:
    rows: list[tuple[str, int, int, int]] = []
    pairs = [
        ("one violation (an extra binary)", ONE_VIOLATION, ONE_BOUNDARY),
        ("three violations", THREE_VIOLATIONS, BOUNDARY),
        ("five violations", FIVE_VIOLATIONS, BOUNDARY),
    ]
    async with Client(create_server()) as client:
        for name, candidate, boundary in pairs:
            arguments = {"candidate": candidate, "boundary": boundary}
            short = await client.call_tool("explain_counterexample", arguments)
            full = await client.call_tool("explain_counterexample", {**arguments, "detail": "full"})
            count = len((short.structured_content or {}).get("violations", []))
            rows.append((name, count, _size(short), _size(full)))
    return rows


def main() -> None:
    line = _tools_list_line()
    tools = json.loads(line)["result"]["tools"]
    print("| tools/list | characters |\n|---|---|")
    print(f"| whole response (as sent) | {len(line):,} |")
    for tool in tools:
        out = len(json.dumps(tool.get("outputSchema"), separators=(",", ":")))
        print(
            f"| {tool['name']}: description / output schema | "
            f"{len(tool['description']):,} / {out:,} |"
        )
    rows = anyio.run(_explain_sizes)
    print("\n| explain_counterexample | violations | compact | full |\n|---|---|---|---|")
    for name, count, short, full in rows:
        print(f"| {name} | {count} | {short:,} | {full:,} |")


if __name__ == "__main__":
    main()

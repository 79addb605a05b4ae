"""``policy-prover demo``: drive the server the way an agent's MCP client does.

The demo starts ``python -m server`` (stdio) as a subprocess through the SDK's
``Client``, lists the tools, runs every tool on the bundled example policies and prints
what an agent would see: the text content, the structured result and the receipt. Demo
steps are listed per tool in :data:`DEMO_STEPS`; a tool the server lists without steps
is reported, and the demo then exits 1, so new tools cannot be forgotten here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from server.examples import boundary_example, candidate_examples


@dataclass(frozen=True)
class DemoStep:
    title: str
    arguments: dict[str, Any]
    expect: dict[str, Any] | None = None


def check_boundary_steps() -> list[DemoStep]:
    boundary = boundary_example()
    return [
        DemoStep(
            title=f"check_boundary: {candidate.name} against {boundary.name}\n  "
            f"({candidate.description})",
            arguments={"candidate": candidate.text, "boundary": boundary.text},
            expect=candidate.expect,
        )
        for candidate in candidate_examples()
    ]


#: Demo steps per tool name. A new tool adds its entry here.
DEMO_STEPS: dict[str, Callable[[], list[DemoStep]]] = {
    "check_boundary": check_boundary_steps,
}


def server_parameters() -> Any:
    """How to launch the server: this interpreter, ``-m server``, with an explicit env.

    The SDK gives the child only a few safe variables (HOME, PATH, ...), so the path
    that makes ``server`` importable is passed on explicitly.
    """
    from mcp import StdioServerParameters

    package_root = str(Path(__file__).resolve().parent.parent)
    pythonpath = os.pathsep.join(
        item for item in (package_root, os.environ.get("PYTHONPATH", "")) if item
    )
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "server"],
        env={"PYTHONPATH": pythonpath, "PYTHONUNBUFFERED": "1"},
    )


async def run_demo(out: TextIO, parameters: Any = None) -> int:
    """Run the demo against a stdio server; return 0 if every step was shown."""
    from mcp import Client

    problems: list[str] = []
    async with Client(parameters or server_parameters()) as client:
        info = client.server_info
        name = info.name if info else "?"
        version = info.version if info else "?"
        _say(out, f"connected to {name} {version} over stdio (protocol {client.protocol_version})")
        tools = (await client.list_tools()).tools
        _say(out, f"\ntools ({len(tools)}):")
        for tool in tools:
            _say(out, f"- {tool.name}: {tool.title or ''}")
            _say(out, f"  {_annotation_summary(tool.annotations)}")
            _say(out, f"  {(tool.description or '').splitlines()[0]}")
        for tool in tools:
            factory = DEMO_STEPS.get(tool.name)
            if factory is None:
                problems.append(f"no demo steps for tool {tool.name}")
                _say(out, f"\n!! no demo steps for tool {tool.name}")
                continue
            for step in factory():
                problems.extend(await _run_step(client, tool.name, step, out))
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        prompts = (await client.list_prompts()).prompts
        _say(out, "\nresources: " + ", ".join(str(r.uri) for r in resources))
        _say(out, "resource templates: " + ", ".join(t.uri_template for t in templates))
        _say(out, "prompts: " + ", ".join(p.name for p in prompts))
    if problems:
        _say(out, "\ndemo problems:\n" + "\n".join(f"- {p}" for p in problems))
        return 1
    _say(out, "\ndemo finished: every tool answered")
    return 0


async def _run_step(client: Any, tool: str, step: DemoStep, out: TextIO) -> list[str]:
    _say(out, f"\n== {step.title}")
    result = await client.call_tool(tool, step.arguments)
    text = "\n".join(getattr(block, "text", "") for block in result.content).rstrip("\n")
    _say(out, "text content:")
    _say(out, "\n".join(f"  | {line}" for line in text.splitlines()))
    if result.is_error:
        return [f"{tool} returned isError: {text}"]
    data = result.structured_content or {}
    receipt = data.get("receipt") or {}
    _say(
        out,
        f"structured: result={data.get('result')} exit_code={data.get('exit_code')} "
        f"reason_code={data.get('reason_code')}",
    )
    if data.get("counterexample") is not None:
        _say(out, f"counterexample: {data['counterexample']}")
    _say(
        out,
        f"receipt: candidate_sha256={str(receipt.get('candidate_sha256'))[:16]}... "
        f"boundary_sha256={str(receipt.get('boundary_sha256'))[:16]}... "
        f"z3={receipt.get('z3_version')} elapsed_ms={receipt.get('elapsed_ms')} "
        f"decided_by={receipt.get('decided_by')}",
    )
    if step.expect is not None:
        got = {key: data.get(key) for key in step.expect}
        if got != step.expect:
            _say(out, f"!! expected {step.expect}, got {got}")
            return [f"{step.title.splitlines()[0]}: expected {step.expect}, got {got}"]
    return []


def _annotation_summary(annotations: Any) -> str:
    if annotations is None:
        return "annotations: none"
    flags = {
        "read-only": annotations.read_only_hint,
        "destructive": annotations.destructive_hint,
        "idempotent": annotations.idempotent_hint,
        "open-world": annotations.open_world_hint,
    }
    return "annotations: " + ", ".join(f"{key}={value}" for key, value in flags.items())


def _say(out: TextIO, text: str) -> None:
    out.write(text + "\n")
    out.flush()

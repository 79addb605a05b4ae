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


def sandbox_environment() -> str:
    """The bundled evidence of the standard sandbox image (workdir, users, symlinks)."""
    from importlib import resources

    node = resources.files("server").joinpath("data", "sandbox-environment.yaml")
    return node.read_text(encoding="utf-8")


def check_boundary_steps() -> list[DemoStep]:
    boundary = boundary_example()
    steps = [
        DemoStep(
            title=f"check_boundary: {candidate.name} against {boundary.name}\n  "
            f"({candidate.description})",
            arguments={"candidate": candidate.text, "boundary": boundary.text},
            expect=candidate.expect,
        )
        for candidate in candidate_examples()
    ]
    path = next(c for c in candidate_examples() if c.name == "candidate-unsupported-path")
    steps.append(
        DemoStep(
            title=f"check_boundary: {path.name} again, with environment evidence\n  "
            "(the image has no symlink there: the subdirectory is within /workspace; the "
            "receipt lists the facts relied on)",
            arguments={
                "candidate": path.text,
                "boundary": boundary.text,
                "environment": sandbox_environment(),
            },
            expect={"result": "within_boundary", "reason_code": None},
        )
    )
    return steps


def explain_counterexample_steps() -> list[DemoStep]:
    boundary = boundary_example()
    steps = []
    for candidate in candidate_examples():
        if (candidate.expect or {}).get("result") not in ("exceeds_boundary", "unsupported"):
            continue
        exceeds = (candidate.expect or {}).get("result") == "exceeds_boundary"
        steps.append(
            DemoStep(
                title=f"explain_counterexample: {candidate.name} against {boundary.name}\n  "
                f"({candidate.description})",
                arguments={"candidate": candidate.text, "boundary": boundary.text},
                expect={"fix_verified": exceeds},
            )
        )
    return steps


def assess_proposal_steps() -> list[DemoStep]:
    """Rules proposed for the ``candidate-within`` sandbox, with a GitHub token in scope."""
    current = next(c for c in candidate_examples() if c.name == "candidate-within")
    boundary = boundary_example()
    credentials = "[{name: github-token, type: github, target_hosts: [api.github.com]}]"
    proposals = [
        ("github_api", "api.github.com", "GET", "the same GET rule again: redundant"),
        ("github_api", "api.github.com", "PUT", "PUT on the credentialed GitHub API"),
        ("example", "example.com", "GET", "a new host: no finding, beyond the boundary"),
    ]
    expect = [
        {"no_new_findings": True, "adds_access": False, "needs_review": False},
        {"no_new_findings": False, "adds_access": True, "needs_review": True},
        {"no_new_findings": True, "adds_access": True, "needs_review": True},
    ]
    return [
        DemoStep(
            title=f"assess_proposal: {what}\n  (current {current.name}, boundary {boundary.name})",
            arguments={
                "current": current.text,
                "proposal": (
                    f"rule_name: {name}\nrule:\n  binaries: [{{path: /usr/bin/curl}}]\n"
                    f"  endpoints:\n    - {{host: {host}, port: 443, protocol: rest, "
                    f"enforcement: enforce, rules: [{{allow: {{method: {method}, "
                    "path: /repos/**}}]}\n"
                ),
                "credentials": credentials,
                "boundary": boundary.text,
            },
            expect=expected,
        )
        for (name, host, method, what), expected in zip(proposals, expect, strict=True)
    ]


#: Demo steps per tool name. A new tool adds its entry here.
DEMO_STEPS: dict[str, Callable[[], list[DemoStep]]] = {
    "check_boundary": check_boundary_steps,
    "assess_proposal": assess_proposal_steps,
    "explain_counterexample": explain_counterexample_steps,
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
    _say(out, "structured: " + _scalar_summary(data))
    if data.get("counterexample") is not None:
        _say(out, f"counterexample: {data['counterexample']}")
    receipt = data.get("receipt")
    if isinstance(receipt, dict):
        _say(out, "receipt: " + _scalar_summary(receipt))
        for fact in receipt.get("assumptions") or ():
            _say(out, f"assumption: {fact}")
    if step.expect is not None:
        got = {key: data.get(key) for key in step.expect}
        if got != step.expect:
            _say(out, f"!! expected {step.expect}, got {got}")
            return [f"{step.title.splitlines()[0]}: expected {step.expect}, got {got}"]
    return []


def _scalar_summary(data: dict[str, Any], limit: int = 8) -> str:
    """The first scalar fields of a structured result, hashes shortened."""
    parts: list[str] = []
    for key, value in data.items():
        if isinstance(value, dict | list):
            continue
        text = str(value)
        if "\n" in text:
            continue
        if key.endswith("sha256") and isinstance(value, str):
            text = value[:16] + "..."
        elif len(text) > 80:
            text = text[:77] + "..."
        parts.append(f"{key}={text}")
        if len(parts) == limit:
            break
    return " ".join(parts)


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

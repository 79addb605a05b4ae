"""The Claude Code plugin (``.claude-plugin/``): one install bundling the MCP server, the
hook and the skill, validated against Claude Code's documented plugin format.

Format, as documented (https://code.claude.com/docs/en/plugins/manifest-reference,
.../plugins-reference, .../plugins/marketplace-reference): ``.claude-plugin/plugin.json``
with a kebab-case ``name`` (the only required field), optional metadata, and component
fields: a path (relative, starting ``./``, inside the plugin root) or an inline object.
``skills`` is a directory of ``<name>/SKILL.md`` (front matter ``name`` and
``description``); ``hooks`` a file of ``{"hooks": {Event: [{matcher, hooks: [{type:
command, command, timeout?}]}]}}``; ``mcpServers`` maps a name to a server (stdio:
``command``, ``args``). ``.claude-plugin/marketplace.json`` lists the plugin (``name``,
``owner.name``, ``plugins[].name`` and ``source``, resolved from the directory holding
``.claude-plugin/``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import server
from prover import __version__
from server.cli import build_parser

ROOT = Path(server.__file__).resolve().parent.parent
PLUGIN = ROOT / ".claude-plugin"

KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
METADATA = {"name", "version", "description", "author", "homepage", "repository", "license"}
COMPONENTS = {
    "keywords",
    "commands",
    "agents",
    "skills",
    "hooks",
    "mcpServers",
    "outputStyles",
    "lspServers",
}
#: Hook events Claude Code documents (the ones a plugin may name).
EVENTS = {
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
}


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    document = _json(PLUGIN / "plugin.json")
    assert isinstance(document, dict)
    return document


def _component_path(value: str) -> Path:
    """A component path as documented: relative with ./, and inside the plugin root."""
    assert value.startswith("./"), value
    resolved = (ROOT / value).resolve()
    assert resolved.is_relative_to(ROOT), value
    assert resolved.exists(), value
    return resolved


def test_the_manifest_has_only_documented_fields_and_this_package_s_version(
    manifest: dict[str, Any],
) -> None:
    assert set(manifest) <= METADATA | COMPONENTS
    assert KEBAB.match(manifest["name"])
    assert manifest["version"] == __version__
    assert isinstance(manifest["description"], str) and manifest["description"]
    assert all(isinstance(k, str) for k in manifest["keywords"])


def test_the_plugin_bundles_the_mcp_server(manifest: dict[str, Any]) -> None:
    servers = manifest["mcpServers"]
    assert set(servers) == {"policy-prover"}
    stdio = servers["policy-prover"]
    assert stdio["type"] == "stdio" and stdio["command"] == "policy-prover"
    assert build_parser().parse_args(stdio["args"]).command == "serve"


def test_the_plugin_bundles_the_hook_as_a_documented_hooks_file(
    manifest: dict[str, Any],
) -> None:
    hooks = _json(_component_path(manifest["hooks"]))
    assert set(hooks) <= {"description", "hooks"}
    events = hooks["hooks"]
    assert events and set(events) <= EVENTS
    commands: list[str] = []
    for groups in events.values():
        for group in groups:
            assert set(group) <= {"matcher", "hooks"} and isinstance(group["matcher"], str)
            for hook in group["hooks"]:
                assert hook["type"] == "command" and isinstance(hook["command"], str)
                assert set(hook) <= {"type", "command", "timeout"}
                assert isinstance(hook.get("timeout", 1), int)
                commands.append(hook["command"])
    # The hook runs this package's own hook command.
    assert any("policy-prover hook claude-code" in command for command in commands)


def test_the_plugin_bundles_the_skill(manifest: dict[str, Any]) -> None:
    skills = _component_path(manifest["skills"])
    found = sorted(p.parent.name for p in skills.glob("*/SKILL.md"))
    assert found == ["policy-prover"]
    text = (skills / "policy-prover" / "SKILL.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---", 2)[1])
    assert front["name"] == "policy-prover" and KEBAB.match(front["name"])
    assert 0 < len(front["description"]) <= 1024


def test_the_marketplace_lists_the_plugin_at_its_root(manifest: dict[str, Any]) -> None:
    marketplace = _json(PLUGIN / "marketplace.json")
    assert KEBAB.match(marketplace["name"])
    assert marketplace["owner"]["name"]
    (entry,) = marketplace["plugins"]
    assert entry["name"] == manifest["name"]
    # Relative sources resolve from the directory that holds .claude-plugin/.
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file()

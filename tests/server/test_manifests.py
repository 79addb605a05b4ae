"""The client and deployment manifests in ``manifests/`` start the server this package ships."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

import server
from prover import __version__
from server.cli import build_parser
from server.http_security import ALLOWED_HOSTS_ENV, TOKEN_ENV

ROOT = Path(server.__file__).resolve().parent.parent
MANIFESTS = ROOT / "manifests"


def _json(name: str) -> Any:
    return json.loads((MANIFESTS / name).read_text(encoding="utf-8"))


def _parses_as_serve(command: str, args: list[str]) -> None:
    assert command == "policy-prover"
    parsed = build_parser().parse_args(args)
    assert parsed.command == "serve"


def test_claude_code_manifest_has_a_stdio_and_a_token_protected_http_server() -> None:
    servers = _json(".mcp.json")["mcpServers"]
    stdio = servers["policy-prover"]
    assert stdio["type"] == "stdio"
    _parses_as_serve(stdio["command"], stdio["args"])
    http = servers["policy-prover-http"]
    assert http["type"] == "http"
    assert http["url"].endswith("/mcp")
    assert http["headers"]["Authorization"] == f"Bearer ${{{TOKEN_ENV}}}"


def test_cursor_manifest_uses_cursor_env_interpolation() -> None:
    servers = _json("mcp.json")["mcpServers"]
    stdio = servers["policy-prover"]
    _parses_as_serve(stdio["command"], stdio["args"])
    http = servers["policy-prover-http"]
    assert http["url"].endswith("/mcp")
    assert http["headers"]["Authorization"] == f"Bearer ${{env:{TOKEN_ENV}}}"


def test_registry_server_json_describes_the_pypi_package_over_stdio() -> None:
    document = _json("server.json")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert document["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", document["name"])
    assert 1 <= len(document["description"]) <= 100
    assert document["version"] == __version__ == project["version"]
    (package,) = document["packages"]
    assert package["registryType"] == "pypi"
    assert package["registryBaseUrl"] == "https://pypi.org"
    assert package["identifier"] == project["name"]
    assert package["version"] == project["version"]
    assert package["transport"] == {"type": "stdio"}
    args = [argument["value"] for argument in package["packageArguments"]]
    assert build_parser().parse_args(args).command == "serve"


@pytest.fixture(scope="module")
def kubernetes() -> dict[str, Any]:
    documents = list(
        yaml.safe_load_all((MANIFESTS / "kubernetes.yaml").read_text(encoding="utf-8"))
    )
    return {document["kind"]: document for document in documents}


def test_kubernetes_deployment_serves_streamable_http_with_the_token_from_a_secret(
    kubernetes: dict[str, Any],
) -> None:
    pod = kubernetes["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    args = build_parser().parse_args(container["args"])
    assert (args.command, args.transport, args.host) == ("serve", "streamable-http", "0.0.0.0")
    env = {item["name"]: item for item in container["env"]}
    assert env[TOKEN_ENV]["valueFrom"]["secretKeyRef"]["key"]
    assert ALLOWED_HOSTS_ENV in env
    port = container["ports"][0]
    assert port["containerPort"] == args.port


def test_kubernetes_probes_use_health_and_limits_and_non_root_are_set(
    kubernetes: dict[str, Any],
) -> None:
    pod = kubernetes["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/health"
    assert container["resources"]["limits"]["cpu"] and container["resources"]["limits"]["memory"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_kubernetes_service_targets_the_container_port(kubernetes: dict[str, Any]) -> None:
    service = kubernetes["Service"]["spec"]
    pod = kubernetes["Deployment"]["spec"]["template"]
    assert service["selector"].items() <= pod["metadata"]["labels"].items()
    (port,) = service["ports"]
    assert port["targetPort"] == pod["spec"]["containers"][0]["ports"][0]["name"]

"""Crafted candidate/boundary pairs for the explain tests."""

from __future__ import annotations

import json
from typing import Any

#: A boundary with a read-only REST API, two exact GitHub hosts and some filesystem.
BOUNDARY = """\
version: 1
filesystem_policy:
  # /tmp read-only: the proxy baseline then adds no writable /tmp (lib.rs
  # enrich_proto_baseline_paths), and with no writable path a write is a sure exceed.
  read_only: [/usr, /data, /tmp]
network_policies:
  api:
    endpoints:
      - host: api.example.com
        port: 8080
        protocol: rest
        enforcement: enforce
        access: read-only
    binaries: [{ path: /usr/bin/curl }]
  web:
    endpoints:
      - { host: api.github.com, ports: [443], allowed_ips: [8.8.8.0/24] }
      - { host: raw.github.com, ports: [443], allowed_ips: [8.8.8.0/24] }
    binaries: [{ path: /usr/bin/git }]
"""

#: Three distinct violations: a write where the boundary only reads, an L4 endpoint where
#: the boundary inspects REST, and a wildcard host over the boundary's two hosts.
THREE_VIOLATIONS = """\
version: 1
filesystem_policy:
  read_only: [/usr, /tmp]
  read_write: [/data]
network_policies:
  api:
    endpoints:
      - { host: api.example.com, port: 8080 }
    binaries: [{ path: /usr/bin/curl }]
  web:
    endpoints:
      - { host: '*.github.com', ports: [443], allowed_ips: [8.8.8.0/24] }
    binaries: [{ path: /usr/bin/git }]
"""


def rest_pair(
    candidate_endpoint: dict[str, Any],
    boundary_endpoint: dict[str, Any],
    binary: str = "/usr/bin/curl",
) -> tuple[str, str]:
    """One rule with one endpoint each; endpoints are written as JSON (valid YAML)."""

    def policy(endpoint: dict[str, Any], path: str) -> str:
        rule = {"endpoints": [endpoint], "binaries": [{"path": path}]}
        return f"version: 1\nnetwork_policies:\n  n: {json.dumps(rule)}\n"

    return policy(candidate_endpoint, binary), policy(boundary_endpoint, "/usr/bin/curl")

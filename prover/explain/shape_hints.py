"""Rewrite hints for ``unsupported_policy_shape`` reasons, one entry per known reason text
(boundary-check spec §5), naming the rule and the policy where the reason does."""

from __future__ import annotations

import re

_PROTOCOL = re.compile(r"uses protocol '(.*?)'")


def shape_hints(side: str, rule: str | None, detail: str) -> list[str]:
    """Rewrite hints for a shape reason; ``detail`` is the reason after the side label."""
    where = f"rule '{rule}' of the {side}" if rule else f"the {side}"
    protocol = _PROTOCOL.search(detail)
    if protocol:
        name = protocol.group(1)
        return [
            f"In {where}, {name} endpoints are outside the model: if the service is plain "
            "HTTP, use protocol: rest with enforcement: enforce and explicit method/path "
            "rules instead.",
            f"Otherwise drop the {name} endpoint from the policy you check and review that "
            "access another way (GraphQL, WebSocket, MCP and JSON-RPC are not modeled).",
        ]
    table: list[tuple[str, list[str]]] = [
        (
            "without enforced inspection",
            [
                f"In {where}, use enforcement: enforce on REST endpoints; audit mode does not "
                "block requests, so the prover cannot rely on the rules.",
            ],
        ),
        (
            "has no port",
            [f"In {where}, give the endpoint a port (or a ports list)."],
        ),
        (
            "unknown protocol",
            [
                f"In {where}, use a protocol the runtime knows (rest, websocket, graphql, sql, "
                "json-rpc, mcp, tcp, or none for L4); its validator refuses the policy "
                "otherwise.",
            ],
        ),
        (
            "no unambiguous host and port",
            [
                f"In {where}, give every endpoint a host and exactly one of port or ports (not "
                "both, and not port 0).",
            ],
        ),
        (
            "IP-literal shape",
            [
                f"In {where}, IPv6 literal hosts are not modeled: use the DNS name and put the "
                "addresses in allowed_ips.",
            ],
        ),
        (
            "IP-literal wildcard",
            [
                f"In {where}, replace the numeric wildcard host by an exact IP address, or by a "
                "DNS name with allowed_ips.",
            ],
        ),
        (
            "endpoint host uses an unsupported pattern",
            [
                f"In {where}, write the host as DNS labels of letters, digits, '-' and '_' (no "
                "label starting or ending with '-'); a wildcard may only be '*' or '**' as a "
                "whole first label (e.g. *.example.com) or at the end of the first label.",
            ],
        ),
        (
            "invalid allowed_ips entry",
            [
                f"In {where}, write every allowed_ips entry as an IP address or a CIDR such as "
                "10.2.0.0/16 (prefix at most 32 for IPv4, 128 for IPv6).",
            ],
        ),
        (
            "always-blocked range",
            [
                f"In {where}, remove loopback, link-local and 0.0.0.0 ranges from allowed_ips "
                "(the runtime always blocks them) and list specific ranges instead of 0.0.0.0/0 "
                "or ::/0.",
            ],
        ),
        (
            "IP literal with explicit TCP",
            [
                f"In {where}, leave protocol unset (instead of protocol: tcp) for an IPv4-literal "
                "host.",
            ],
        ),
        (
            "mixes REST controls into L4",
            [
                f"In {where}, either make the endpoint protocol: rest with enforcement: enforce, "
                "or remove enforcement, access, path, rules and deny_rules from the L4 endpoint.",
            ],
        ),
        (
            "unsupported REST allow shape",
            [
                f"In {where}, give each REST endpoint exactly one of access (read-only, "
                "read-write or full) or rules.",
            ],
        ),
        (
            "unsupported REST",
            [
                f"In {where}, give every REST rule a method; write paths that start with '/' "
                "without ? [ ] { } or \\; match query values exactly or with a whole '*' (no "
                "partial globs such as git-*, no {any: [...]}); drop GraphQL, SQL and MCP "
                "fields (command, operation_type, operation_name, fields, tool, params).",
            ],
        ),
        (
            "unsupported glob",
            [
                f"In {where}, remove ? [ ] {{ }} and \\ from the endpoint path; only * and ** "
                "are modeled.",
            ],
        ),
        (
            "non-canonical endpoint path",
            [
                f"In {where}, write the endpoint path starting with '/' without '//', '.' or "
                "'..' segments.",
            ],
        ),
        (
            "outside the initial model",
            [
                f"In {where}, remove the fields the prover does not model (credential "
                "rewriting or signing, allow_encoded_slash, allow_uninspected_credentials, "
                "GraphQL, JSON-RPC or MCP options, tls other than terminate/passthrough), or "
                "check that endpoint another way.",
            ],
        ),
        (
            "non-ASCII literal",
            [
                f"In {where}, use ASCII only in hosts, paths, methods and binaries "
                "(percent-encode paths, use the punycode form of hosts).",
            ],
        ),
        ("embedded NUL byte", [f"In {where}, remove the NUL byte from the value."]),
        (
            "unsupported binary",
            [
                f"In {where}, write binaries as absolute paths without '//', '.' or '..' "
                "segments and without ? [ ] { } or \\ (* and ** are allowed).",
            ],
        ),
        (
            "unsupported process identity",
            [
                "Use sandbox, root, 0 or a decimal id (quoted, e.g. '1500') for run_as_user and "
                "run_as_group.",
            ],
        ),
        ("network middleware", ["Remove network_middlewares; middleware is not modeled."]),
        ("Cedar", ["Remove cedar_policy; Cedar policies are not modeled."]),
        (
            "different allowed_ips",
            [
                f"In the {side}, give overlapping endpoints (same host and port, or a wildcard "
                "host on the same port) the same allowed_ips list, or move them to different "
                "ports; a wildcard host overlaps every host on its port.",
            ],
        ),
        (
            "exact and wildcard endpoints",
            [
                f"In the {side}, add the same allowed_ips to the exact and the wildcard "
                "endpoint that share a port, or split them onto different ports; without "
                "allowed_ips an exact host may reach private addresses and a wildcard may not.",
            ],
        ),
        (
            "overlapping L4 and REST",
            [
                f"In the {side}, make endpoints that share a host and port (or a wildcard on "
                "that port) all REST with enforcement: enforce, or all L4; or split them onto "
                "different ports.",
            ],
        ),
    ]
    for needle, hints in table:
        if needle in detail:
            return hints
    return [f"Rewrite {where} so that it uses only L4 TCP and enforced REST endpoints."]

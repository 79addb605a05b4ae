"""Record what mainline OpenShell says of every corpus policy and of targeted rows.

Usage: ``python -m benchmarks.mainline_validation_table OPENSHELL_VALIDATE [OUT]``

``OPENSHELL_VALIDATE`` is OpenShell's own validator built from its source (NVIDIA/OpenShell
at 2f7fb65: ``parse_sandbox_policy``, ``validate_sandbox_policy`` and
``find_endpoint_ambiguities`` of ``crates/openshell-policy``). It is run on every policy of
``tests/data/real_policies`` and on :data:`ROWS` (one case for each kind of refusal, and
what mainline accepts that a stricter reading would not), and its answers are written to
``OUT`` (default ``tests/data/mainline_validation.json``), which
``tests/prover/runtime/test_mainline_table.py`` compares the prover's reading with. The
tests never run the validator: the project must stand alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.corpus import CORPUS_DIR, corpus_entries

OUT = Path(__file__).parent.parent / "tests" / "data" / "mainline_validation.json"


def _rule(*endpoints: str, name: str = "r") -> str:
    listed = "".join(f"      - {endpoint}\n" for endpoint in endpoints)
    return (
        f"version: 1\nnetwork_policies:\n  {name}:\n    binaries: [{{path: /usr/bin/curl}}]\n"
        f"    endpoints:\n{listed}"
    )


REST = "protocol: rest, enforcement: enforce"
MIDDLEWARE = "version: 1\nnetwork_middlewares:\n  m:\n%s"

#: Targeted rows: id -> policy text.
ROWS: dict[str, str] = {
    "identity-root": "version: 1\nprocess: {run_as_user: root, run_as_group: root}\n",
    "identity-zero": "version: 1\nprocess: {run_as_user: '0', run_as_group: '0'}\n",
    "identity-agent": "version: 1\nprocess: {run_as_user: agent}\n",
    "identity-nobody": "version: 1\nprocess: {run_as_group: nobody}\n",
    "identity-max": "version: 1\nprocess: {run_as_user: '4294967295'}\n",
    "identity-unquoted-zero": "version: 1\nprocess: {run_as_user: 0}\n",
    "identity-accepted-forms": "version: 1\nprocess: {run_as_user: '+1000', run_as_group: '007'}\n",
    "identity-sandbox": "version: 1\nprocess: {run_as_user: sandbox, run_as_group: '1000'}\n",
    "read-write-root": "version: 1\nfilesystem_policy: {read_write: [/]}\n",
    "read-write-slashes": "version: 1\nfilesystem_policy: {read_write: ['///']}\n",
    "relative-path": "version: 1\nfilesystem_policy: {read_only: [usr, '']}\n",
    "dotdot-path": "version: 1\nfilesystem_policy: {read_write: [/tmp/../etc]}\n",
    "too-many-paths": "version: 1\nfilesystem_policy: {read_only: ["
    + ", ".join(f"/p{i}" for i in range(257))
    + "]}\n",
    "path-too-long": f"version: 1\nfilesystem_policy: {{read_only: [/{'a' * 4100}]}}\n",
    "tld-wildcard": _rule("{host: '*.com', port: 443}"),
    "tld-recursive-wildcard": _rule("{host: '**.com', port: 443}"),
    "host-star": _rule("{host: '*', port: 443}"),
    "host-middle-wildcard": _rule("{host: 'api.*x.com', port: 443}"),
    "port-zero-in-ports": _rule("{host: a.example.com, ports: [0, 443]}"),
    "port-zero": _rule("{host: a.example.com, port: 0}"),
    "no-port": _rule("{host: a.example.com}"),
    "port-too-large": _rule("{host: a.example.com, port: 70000}"),
    "hostless": _rule("{port: 443}"),
    "hostless-with-allowed-ips": _rule("{port: 8080, allowed_ips: [10.0.0.0/8]}"),
    "rest-without-rules-or-access": _rule(f"{{host: a.example.com, port: 443, {REST}}}"),
    "rest-with-rules-and-access": _rule(
        f"{{host: a.example.com, port: 443, {REST}, access: full, "
        "rules: [{allow: {method: GET, path: /}}]}"
    ),
    "rules-deny-all": _rule(
        f"{{host: a.example.com, port: 443, {REST}, rules: [{{allow: {{query: {{a: b}}}}}}]}}"
    ),
    "protocol-https": _rule("{host: a.example.com, port: 443, protocol: https, access: full}"),
    "protocol-case": _rule("{host: a.example.com, port: 443, protocol: REST, access: full}"),
    "deny-rules-without-protocol": _rule(
        "{host: a.example.com, port: 443, deny_rules: [{method: POST}]}"
    ),
    "tcp-ip-literal": _rule("{host: 10.0.0.5, port: 5432, protocol: tcp}"),
    "tcp-hostless": _rule("{port: 5432, protocol: tcp, allowed_ips: [10.0.0.0/8]}"),
    "tcp-trailing-dot": _rule("{host: db.example.com., port: 5432, protocol: tcp}"),
    "tcp-l7-fields": _rule(
        "{host: db.example.com, port: 5432, protocol: tcp, enforcement: enforce, path: /x, "
        "access: full}"
    ),
    "mcp-access": _rule("{host: m.example.com, port: 443, protocol: mcp, access: full}"),
    "mcp-allow-all": _rule(
        "{host: m.example.com, port: 443, protocol: mcp, mcp: {allow_all_known_mcp_methods: true}}"
    ),
    "mcp-options-on-rest": _rule(
        "{host: a.example.com, port: 443, protocol: rest, access: full, "
        "mcp: {strict_tool_names: true}}"
    ),
    "mcp-body-limit-on-rest": _rule(
        "{host: a.example.com, port: 443, protocol: rest, access: full, "
        "mcp: {max_body_bytes: 1024}}"
    ),
    "json-rpc-without-rules": _rule("{host: r.example.com, port: 443, protocol: json-rpc}"),
    "sql-enforce": _rule(
        "{host: db.example.com, port: 5432, protocol: sql, enforcement: enforce, access: full}"
    ),
    "graphql-operation-type": _rule(
        "{host: g.example.com, port: 443, protocol: graphql, "
        "rules: [{allow: {operation_type: fetch}}]}"
    ),
    "persisted-queries": _rule(
        "{host: g.example.com, port: 443, protocol: graphql, access: full, "
        "persisted_queries: allow-list}"
    ),
    "path-selector": _rule(f"{{host: a.example.com, port: 443, {REST}, access: full, path: x}}"),
    "credential-signing": _rule(
        "{host: s3.example.com, port: 443, credential_signing: sigv5, "
        "request_body_credential_rewrite: true}"
    ),
    "ambiguity-tcp": _rule(
        "{host: db.example.com, port: 5432, protocol: tcp}", "{host: db.example.com, port: 5432}"
    ),
    "ambiguity-tls": _rule(
        "{host: a.example.com, port: 443, tls: skip}", "{host: '*.example.com', port: 443}"
    ),
    "ambiguity-allowed-ips": _rule(
        "{host: a.example.com, port: 443, allowed_ips: [10.0.0.0/8]}",
        "{host: a.example.com, port: 443, allowed_ips: [10.1.0.0/16]}",
    ),
    "ambiguity-enforcement": _rule(
        f"{{host: a.example.com, port: 443, {REST}, access: full}}",
        "{host: a.example.com, port: 443, protocol: rest, enforcement: audit, access: full}",
    ),
    "no-ambiguity-distinct-paths": _rule(
        f"{{host: a.example.com, port: 443, {REST}, access: full, path: /a}}",
        "{host: a.example.com, port: 443, protocol: rest, access: full, path: /bb}",
    ),
    "no-ambiguity-same-config": _rule(
        f"{{host: a.example.com, port: 443, {REST}, access: read-only}}",
        f"{{host: a.example.com, port: 443, {REST}, access: full}}",
    ),
    "landlock-strict": "version: 1\nlandlock: {compatibility: strict}\n",
    "landlock-disabled": "version: 1\nlandlock: {compatibility: disabled}\n",
    "landlock-empty": "version: 1\nlandlock: {compatibility: ''}\n",
    "inference-section": "version: 1\ninference:\n  allowed_routes: [local]\n",
    "filesystem-legacy-name": "version: 1\nfilesystem:\n  read_only: [/usr]\n",
    "cedar-policy": "version: 1\ncedar_policy: 'permit(principal, action, resource);'\n",
    "mcp-versions": _rule(
        "{host: m.example.com, port: 443, protocol: mcp, mcp: {versions: ['2025-06-18']}, "
        "rules: [{allow: {method: tools/call}}]}"
    ),
    "query-glob-object": _rule(
        f"{{host: a.example.com, port: 443, {REST}, "
        "rules: [{allow: {method: GET, query: {q: {glob: x}}}}]}"
    ),
    "empty-rule-lists": _rule(
        f"{{host: a.example.com, port: 443, {REST}, access: full, rules: [], deny_rules: []}}"
    ),
    "null-sections": "version: 1\nfilesystem_policy: null\nprocess: null\nlandlock: null\n",
    "comment-only-network-policies": "version: 1\nnetwork_policies:\n  # none yet\n",
    "harness-flag": _rule("{host: a.example.com, port: 443}").replace(
        "{path: /usr/bin/curl}", "{path: /usr/bin/curl, harness: true}"
    ),
    "middlewares-list-form": MIDDLEWARE.replace("  m:\n%s", "  - {name: m, middleware: x/y}\n"),
    "middleware-no-selector": MIDDLEWARE % "    middleware: x/guard\n",
    "middleware-bad-fields": MIDDLEWARE
    % (
        "    middleware: ''\n    on_error: ignore\n"
        "    endpoints: {include: [], exclude: ['a b', '{x,y}.com', 'a..b', 'a[b']}\n"
    ),
    "middleware-duplicate-order": (
        "version: 1\nnetwork_middlewares:\n"
        "  a: {middleware: x/one, endpoints: {include: [a.example.com]}}\n"
        "  b: {middleware: x/two, endpoints: {include: [b.example.com]}}\n"
    ),
    "middleware-tls-skip": _rule(
        "{host: api.example.com, port: 443, tls: skip}",
    )
    + "network_middlewares:\n  m: {middleware: x/guard, endpoints: {include: ['*.example.com']}}\n",
    "middleware-tls-skip-fail-open": _rule(
        "{host: api.example.com, port: 443, tls: skip}",
    )
    + "network_middlewares:\n  m: {middleware: x/guard, on_error: fail_open, "
    "endpoints: {include: ['*.example.com']}}\n",
    "middleware-tls-skip-excluded": _rule(
        "{host: api.example.com, port: 443, tls: skip}",
    )
    + "network_middlewares:\n  m: {middleware: x/guard, "
    "endpoints: {include: ['*.example.com'], exclude: [api.example.com]}}\n",
    "middleware-tls-skip-recursive": _rule("{host: '*.api.example.com', port: 443, tls: skip}")
    + "network_middlewares:\n  m: {middleware: x/guard, "
    "endpoints: {include: ['**.example.com']}}\n",
    "middleware-tls-skip-universal-exclude": _rule(
        "{host: '*.api.example.com', port: 443, tls: skip}"
    )
    + "network_middlewares:\n  m: {middleware: x/guard, "
    "endpoints: {include: ['**.example.com'], exclude: ['**']}}\n",
    "middleware-tls-skip-literal-include": _rule("{host: '*.example.com', port: 443, tls: skip}")
    + "network_middlewares:\n  m: {middleware: x/guard, "
    "endpoints: {include: [api.example.com], exclude: ['api.*.com']}}\n",
    "middleware-tls-skip-disjoint": _rule("{host: 'a*.example.com', port: 443, tls: skip}")
    + "network_middlewares:\n  m: {middleware: x/guard, endpoints: {include: [b.example.com]}}\n",
    "middleware-glob-errors": MIDDLEWARE
    % "    middleware: x/y\n    endpoints: {include: ['a**b.com', '***.com', 'x[!a.com', '']}\n",
    "tcp-selector-errors": _rule(
        "{host: '{a,b}.example.com', port: 5432, protocol: tcp}",
        "{host: 'a b.example.com', port: 5433, protocol: tcp}",
        f"{{host: '{'x' * 64}.example.com', port: 5434, protocol: tcp}}",
        f"{{host: '{'.'.join(['a' * 60] * 5)}', port: 5435, protocol: tcp}}",
        "{host: 'é.example.com', port: 5436, protocol: tcp}",
    ),
    "several-violations": (
        "version: 1\nprocess: {run_as_user: root}\nfilesystem_policy: {read_write: [/, tmp]}\n"
        "network_policies:\n  r:\n    endpoints:\n      - {host: '*.com', ports: [0]}\n"
        "      - {host: a.example.com, port: 443, protocol: https}\n"
    ),
}


def _ask(validator: str, path: Path) -> dict[str, object]:
    out = subprocess.run([validator, str(path)], capture_output=True, text=True, check=True)
    answer = json.loads(out.stdout)
    return {
        "parse_sandbox_policy": answer["parse"],
        "validate_sandbox_policy": answer["violations"],
        "find_endpoint_ambiguities": answer["ambiguities"],
    }


def main(argv: list[str]) -> None:
    validator = argv[0]
    out = Path(argv[1]) if len(argv) > 1 else OUT
    corpus = {entry.file: _ask(validator, CORPUS_DIR / entry.file) for entry in corpus_entries()}
    rows = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, text in ROWS.items():
            path = Path(scratch) / f"{name}.yaml"
            path.write_text(text, encoding="utf-8")
            rows[name] = {"policy": text, **_ask(validator, path)}
    document = {
        "source": "openshell-validate, built from NVIDIA/OpenShell 2f7fb65 "
        "(crates/openshell-policy: parse_sandbox_policy, validate_sandbox_policy, "
        "find_endpoint_ambiguities); maps are unordered upstream, so the order of "
        "violations and the side of an ambiguity pair may differ between runs",
        "command": "python -m benchmarks.mainline_validation_table OPENSHELL_VALIDATE",
        "corpus": corpus,
        "rows": rows,
    }
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    refused = sum(
        1
        for answer in corpus.values()
        if answer["parse_sandbox_policy"] != "ok"
        or answer["validate_sandbox_policy"]
        or answer["find_endpoint_ambiguities"]
    )
    print(f"corpus: {len(corpus)} policies, {len(corpus) - refused} accepted, {refused} refused")
    print(f"rows: {len(rows)}")


if __name__ == "__main__":
    main(sys.argv[1:])

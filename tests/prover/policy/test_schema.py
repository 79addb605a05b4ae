"""The closed authored schema: every field loads, and every parse-level error is precise."""

from __future__ import annotations

import json

import pytest

from prover.errors import PolicyLoadError
from prover.policy.loader import load_policy
from prover.policy.schema import (
    AuthoredPolicy,
    EndpointSection,
    L7Matcher,
    QueryAny,
    QueryGlob,
    normalize_filesystem_path,
    policy_json_schema,
)

EVERY_FIELD = """\
version: 1
filesystem_policy:
  include_workdir: true
  read_only: [/usr, /lib]
  read_write: [/sandbox, /tmp]
landlock: {compatibility: hard_requirement}
process: {run_as_user: sandbox, run_as_group: '1500'}
network_policies:
  github:
    name: github-api
    endpoints:
      - host: api.github.com
        port: 443
        path: /**
        protocol: rest
        tls: terminate
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /repos/**, query: {per_page: '*', q: {any: [a, b]}}}
          - allow: {method: POST, path: /x, query: {state: {glob: open}}}
        deny_rules: [{method: DELETE, path: /**}]
        allow_encoded_slash: true
        allow_uninspected_credentials: false
        websocket_credential_rewrite: false
        request_body_credential_rewrite: true
        credential_signing: sigv4
        signing_service: execute-api
        signing_region: us-east-1
        credential_binding: {provider: aws}
        allowed_ips: [10.0.0.0/8]
      - host: api.github.com
        ports: [443, 8443]
        path: /graphql
        protocol: graphql
        persisted_queries: allow_registered
        graphql_persisted_queries:
          abc123: {operation_type: query, operation_name: Viewer, fields: [viewer]}
          def456: {operation_type: mutation}
        graphql_max_body_bytes: 65536
        rules:
          - allow: {operation_type: query, operation_name: 'Get*', fields: [viewer]}
      - host: rpc.example.com
        port: 443
        protocol: json-rpc
        json_rpc: {max_body_bytes: 131072}
        rules: [{allow: {method: '*'}}]
      - host: mcp.example.com
        port: 443
        protocol: mcp
        mcp:
          max_body_bytes: 131072
          strict_tool_names: true
          allow_all_known_mcp_methods: false
          versions: ['2025-06-18', '2025-11-25']
        rules:
          - allow: {method: tools/call, tool: {any: [search, read]}}
          - allow: {method: tools/call, params: {name: lookup, nested: {any: null}}}
        deny_rules: [{method: tools/call, tool: delete}]
      - host: db.example.com
        port: 5432
        protocol: sql
        enforcement: audit
        rules: [{allow: {command: SELECT}}]
      - {host: ws.example.com, port: 443, protocol: websocket, access: read-write}
    binaries: [{path: /usr/bin/gh}, {path: '/sandbox/.venv/**'}]
network_middlewares:
  redactor:
    name: token-redactor
    middleware: openshell/regex
    order: 10
    config: {mode: redact, patterns: [null, 1, {x: y}]}
    on_error: fail_open
    endpoints: {include: ['*.example.com'], exclude: [db.example.com]}
cedar_policy: 'permit(principal, action, resource);'
"""


# Refused by the strict (reference) reading, accepted by the mainline reading
# (tests/prover/policy/test_mainline.py covers them).
MAINLINE_ACCEPTS = {
    "version: 1\nfilesystem_policy: null\n",
    "version: 1\nprocess: null\n",
    "version: 1\nnetwork_policies: null\n",
    "version: 1\nprocess: {run_as_user: 1500}\n",
    "version: 1\nprocess: {run_as_group: 0}\n",
    "version: 1\nlandlock: {compatibility: disabled}\n",
}


def _refusal(text: str) -> PolicyLoadError:
    """The strict reading's error; the default reading must refuse too, the same way
    unless the mainline parser refuses the field itself (``{glob: ...}`` matchers)."""
    with pytest.raises(PolicyLoadError) as caught:
        load_policy(text, reference=True)
    mainline_accepts = text in MAINLINE_ACCEPTS or ("rules: []" in text)
    if not mainline_accepts:
        with pytest.raises(PolicyLoadError) as default:
            load_policy(text)
        if "glob" not in text:
            assert str(default.value) == str(caught.value)
    return caught.value


def test_a_policy_using_every_field_of_the_authored_format_loads() -> None:
    # cedar_policy, {glob: ...} and mcp.versions are the newer schema's: the mainline
    # parser refuses them (test_mainline.py), the reference reading reads them.
    policy = load_policy(EVERY_FIELD, reference=True)
    rule = policy.network_policies["github"]
    rest, graphql, _, mcp, _, websocket = rule.endpoints
    assert rest.credential_binding is not None and rest.credential_binding.provider == "aws"
    assert rest.rules[0].allow is not None and rest.rules[0].allow.query == {
        "per_page": "*",
        "q": QueryAny(any=("a", "b")),
    }
    assert rest.rules[1].allow is not None and rest.rules[1].allow.query == {
        "state": QueryGlob(glob="open")
    }
    assert graphql.graphql_persisted_queries is not None
    assert graphql.graphql_persisted_queries["abc123"].fields == ("viewer",)
    assert mcp.mcp is not None and mcp.mcp.versions == ("2025-06-18", "2025-11-25")
    assert mcp.rules[0].allow is not None and mcp.rules[0].allow.tool == QueryAny(
        any=("search", "read")
    )
    assert mcp.rules[1].allow is not None
    assert mcp.rules[1].allow.params == {"name": "lookup", "nested": {"any": None}}
    assert websocket.access == "read-write"
    middleware = policy.network_middlewares["redactor"]
    assert middleware.config == {"mode": "redact", "patterns": [None, 1, {"x": "y"}]}
    assert policy.cedar_policy == "permit(principal, action, resource);"


def test_absent_optional_fields_are_none_and_lists_are_empty() -> None:
    policy = load_policy("version: 1\nnetwork_policies: {r: {endpoints: [{}]}}\n")
    assert policy.filesystem_policy is None
    assert policy.landlock is None and policy.process is None and policy.cedar_policy is None
    assert policy.network_middlewares == {}
    rule = policy.network_policies["r"]
    assert rule.name is None and rule.binaries == ()
    endpoint = rule.endpoints[0]
    assert endpoint == EndpointSection()
    assert endpoint.host is None and endpoint.port is None and endpoint.ports == ()
    assert endpoint.rules == () and endpoint.deny_rules == () and endpoint.allowed_ips == ()
    assert endpoint.mcp is None and endpoint.graphql_persisted_queries is None
    assert L7Matcher().query is None and L7Matcher().fields is None


def test_shapes_the_prover_does_not_model_still_load() -> None:
    text = """\
version: 1
network_policies:
  g: {endpoints: [{host: api.example.com, port: 443, protocol: graphql}]}
  n: {endpoints: [{port: 443}, {protocol: rest}, {access: bogus}]}
  r: {endpoints: [{host: a.example.com, port: 443, protocol: rest, rules: [{}]}]}
"""
    policy = load_policy(text)
    assert policy.network_policies["g"].endpoints[0].protocol == "graphql"
    assert policy.network_policies["r"].endpoints[0].rules[0].allow is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: 1\nfuture: 1\n", "unknown field 'future' in authored policy"),
        (
            "version: 1\nnetwork_policies: {gh: {endpoints: [{hots: x}]}}\n",
            "unknown field 'network_policies.gh.endpoints[0].hots' in authored policy",
        ),
        (
            "version: 1\nnetwork_policies: {gh: {endpoints: [{review: x}]}}\n",
            "unknown field 'network_policies.gh.endpoints[0].review'",
        ),
        (
            "version: 1\nnetwork_policies: {gh: {binaries: [{path: /x, harness: 1}]}}\n",
            "unknown field 'network_policies.gh.binaries[0].harness'",
        ),
        (
            "version: 1\nnetwork_policies: {gh: {endpoints: [{rules: [{deny: {}}]}]}}\n",
            "unknown field 'network_policies.gh.endpoints[0].rules[0].deny'",
        ),
        (
            "version: 1\nnetwork_policies: {g: {endpoints: [{rules: [{allow: {x: 1}}]}]}}\n",
            "unknown field 'network_policies.g.endpoints[0].rules[0].allow.x'",
        ),
        (
            "version: 1\nnetwork_policies: {g: {endpoints: [{mcp: {strict: true}}]}}\n",
            "unknown field 'network_policies.g.endpoints[0].mcp.strict'",
        ),
        (
            "version: 1\nnetwork_middlewares: {m: {middleware: x, endpoints: {all: true}}}\n",
            "unknown field 'network_middlewares.m.endpoints.all'",
        ),
        ("version: 2\n", "unsupported policy version 2; expected version 1"),
        ("version: 0\nfuture: 1\n", "unsupported policy version 0; expected version 1"),
        ("version: '1'\n", "field 'version' must be an integer"),
        ("version: true\n", "field 'version' must be an integer"),
        ("process: {}\n", "missing required field 'version'"),
        ("version: ~\n", "field 'version' must not be null"),
        ("version: 1\nfilesystem_policy: null\n", "field 'filesystem_policy' must not be null"),
        ("version: 1\nprocess: null\n", "field 'process' must not be null"),
        ("version: 1\nnetwork_policies: null\n", "field 'network_policies' must not be null"),
        (
            "version: 1\nnetwork_policies: {a: null}\n",
            "field 'network_policies.a' must not be null",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{mcp: null, protocol: mcp}]}}\n",
            "field 'network_policies.a.endpoints[0].mcp' must not be null",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{host: ~}]}}\n",
            "field 'network_policies.a.endpoints[0].host' must not be null",
        ),
        (
            "version: 1\nfilesystem_policy: {read_only: [/usr, null]}\n",
            "field 'filesystem_policy.read_only[1]' must not be null",
        ),
        (
            "version: 1\nnetwork_middlewares: {m: {middleware: x, config: null}}\n",
            "field 'network_middlewares.m.config' must not be null",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{host: x, port: 65536}]}}\n",
            "field 'network_policies.a.endpoints[0].port' must be at most 65535",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{ports: [443, -1]}]}}\n",
            "field 'network_policies.a.endpoints[0].ports[1]' must be at least 0",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{port: '443'}]}}\n",
            "field 'network_policies.a.endpoints[0].port' must be an integer "
            "(got the string '443')",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{port: 443.0}]}}\n",
            "field 'network_policies.a.endpoints[0].port' must be an integer",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{host: 1}]}}\n",
            "field 'network_policies.a.endpoints[0].host' must be a string (got the number 1)",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{allow_encoded_slash: 'yes'}]}}\n",
            "field 'network_policies.a.endpoints[0].allow_encoded_slash' must be a boolean",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: {host: x}}}\n",
            "field 'network_policies.a.endpoints' must be a list",
        ),
        ("version: 1\nnetwork_policies: [a]\n", "field 'network_policies' must be a mapping"),
        (
            "version: 1\nnetwork_policies: {a: {binaries: [{}]}}\n",
            "missing required field 'network_policies.a.binaries[0].path'",
        ),
        (
            "version: 1\nnetwork_policies: {a: {endpoints: [{credential_binding: {}}]}}\n",
            "missing required field 'network_policies.a.endpoints[0].credential_binding.provider'",
        ),
        (
            "version: 1\nnetwork_policies:\n"
            "  a: {endpoints: [{graphql_max_body_bytes: 4294967296}]}\n",
            "graphql_max_body_bytes' must be at most 4294967295",
        ),
        (
            "version: 1\nnetwork_middlewares: {m: {middleware: x, order: 2147483648}}\n",
            "field 'network_middlewares.m.order' must be at most 2147483647",
        ),
        (
            "version: 1\nnetwork_middlewares: {m: {middleware: x, on_error: ignore}}\n",
            "field 'network_middlewares.m.on_error' must be 'fail_closed' or 'fail_open'",
        ),
        ("version: 1\nnetwork_middlewares: {m: {}}\n", "'network_middlewares.m.middleware'"),
        (
            "version: 1\nlandlock: {compatibility: disabled}\n",
            "field 'landlock.compatibility' must be 'best_effort' or 'hard_requirement' "
            "(got the string 'disabled')",
        ),
        (
            "version: 1\nprocess: {run_as_user: 1500}\n",
            "field 'process.run_as_user' must be a string (got the integer 1500); "
            "quote numeric ids in YAML",
        ),
        ("version: 1\nprocess: {run_as_group: 0}\n", "field 'process.run_as_group' must be"),
        ("version: 1\nprocess: {capabilities: all}\n", "unknown field 'process.capabilities'"),
        (
            "version: 1\nnetwork_policies: {n: {endpoints: [{protocol: rest, mcp: {}}]}}\n",
            "field 'network_policies.n.endpoints[0].mcp' (mcp options) is only valid for "
            "protocol mcp",
        ),
        (
            "version: 1\nnetwork_policies: {n: {endpoints: [{mcp: {}}]}}\n",
            "is only valid for protocol mcp",
        ),
        (
            "version: 1\nnetwork_policies: {n: {endpoints: [{host: a.example, port: 443, "
            "rules: []}]}}\n",
            "field 'network_policies.n.endpoints[0].rules' must not be an empty list: rules "
            "list cannot be empty (would deny all traffic)",
        ),
        (
            "version: 1\nnetwork_policies: {n: {endpoints: [{host: a.example, port: 443, "
            "protocol: rest, enforcement: enforce, access: full, deny_rules: []}]}}\n",
            "field 'network_policies.n.endpoints[0].deny_rules' must not be an empty list: "
            "deny_rules list cannot be empty (would have no effect)",
        ),
        (
            "version: 1\nfilesystem_policy: {read_only: [tmp]}\n",
            "filesystem path 'filesystem_policy.read_only[0]' must be absolute",
        ),
        (
            "version: 1\nfilesystem_policy: {read_write: [/ok, '']}\n",
            "filesystem path 'filesystem_policy.read_write[1]' must be absolute",
        ),
        (
            "version: 1\nfilesystem_policy: {read_write: [/a/../etc]}\n",
            "filesystem path 'filesystem_policy.read_write[0]' contains a '..' traversal segment",
        ),
    ],
)
def test_invalid_documents_are_refused_with_the_dotted_path_of_the_problem(
    text: str, message: str
) -> None:
    error = _refusal(text)
    assert message in str(error)
    assert "\n" not in str(error)


QUERY = "version: 1\nnetwork_policies: {n: {endpoints: [{rules: [{allow: {query: %s}}]}]}}\n"
QUERY_PATH = "network_policies.n.endpoints[0].rules[0].allow.query"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("{k: 5}", f"field '{QUERY_PATH}.k' must be a string, {{any: [...]}} or {{glob: ...}}"),
        ("{k: null}", f"field '{QUERY_PATH}.k' must not be null"),
        ("{k: {all: [a]}}", f"unknown field '{QUERY_PATH}.k.all'"),
        ("{k: {any: [a], glob: b}}", f"field '{QUERY_PATH}.k' must be a string"),
        ("{k: {}}", f"field '{QUERY_PATH}.k' must be a string"),
        ("{k: {any: a}}", f"field '{QUERY_PATH}.k.any' must be a list of strings"),
        ("{k: {any: [a, 1]}}", f"field '{QUERY_PATH}.k.any[1]' must be a string"),
        ("{k: {any: [a, null]}}", f"field '{QUERY_PATH}.k.any[1]' must not be null"),
        ("{k: {glob: [a]}}", f"field '{QUERY_PATH}.k.glob' must be a string"),
        ("[k]", f"field '{QUERY_PATH}' must be a mapping"),
        ("null", f"field '{QUERY_PATH}' must not be null"),
    ],
)
def test_query_matchers_accept_only_a_string_any_or_glob(query: str, message: str) -> None:
    assert message in str(_refusal(QUERY % query))


def test_an_mcp_tool_matcher_accepts_a_string_or_any_but_not_glob() -> None:
    base = "version: 1\nnetwork_policies: {n: {endpoints: [{rules: [{allow: {tool: %s}}]}]}}\n"
    assert load_policy(base % "search")
    assert load_policy(base % "{any: [a]}")
    error = _refusal(base % "{glob: a}")
    assert "unknown field 'network_policies.n.endpoints[0].rules[0].allow.tool.glob'" in str(error)


def test_the_mcp_stanza_is_accepted_for_protocol_mcp_in_any_case() -> None:
    assert load_policy("version: 1\nnetwork_policies: {n: {endpoints: [{protocol: MCP, mcp: {}}]}}")


def test_errors_carry_the_dotted_path_separately() -> None:
    error = _refusal("version: 1\nnetwork_policies: {gh: {endpoints: [{hots: x}]}}\n")
    assert error.path == "network_policies.gh.endpoints[0].hots"


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("/usr//./lib/", "/usr/lib"),
        ("/", "/"),
        ("//", "/"),
        ("/.", "/"),
        ("/tmp/cache/.", "/tmp/cache"),
        ("/a/.hidden/", "/a/.hidden"),
        ("/a/...", "/a/..."),
        ("relative", None),
        ("", None),
        ("/a/../b", None),
        ("/..", None),
    ],
)
def test_filesystem_paths_normalise_lexically(raw: str, normalised: str | None) -> None:
    assert normalize_filesystem_path(raw) == normalised


def test_filesystem_paths_are_stored_normalised() -> None:
    policy = load_policy("version: 1\nfilesystem_policy: {read_only: [/usr//./lib/, /]}\n")
    assert policy.filesystem_policy is not None
    assert policy.filesystem_policy.read_only == ("/usr/lib", "/")


def test_models_are_frozen() -> None:
    policy = load_policy("version: 1\n")
    with pytest.raises(ValueError, match="frozen"):
        policy.version = 1  # type: ignore[misc]


def _objects(node: object) -> list[dict[str, object]]:
    if isinstance(node, list):
        return [found for item in node for found in _objects(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if node.get("type") == "object" else []
    return own + [found for value in node.values() for found in _objects(value)]


def test_the_json_schema_is_titled_closed_and_never_offers_null() -> None:
    schema = policy_json_schema()
    assert schema["title"] == "OpenShell authored sandbox policy"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["required"] == ["version"]
    assert schema["properties"]["version"]["const"] == 1
    text = json.dumps(schema)
    assert '"null"' not in text
    open_maps = [obj for obj in _objects(schema) if obj.get("additionalProperties") is True]
    assert {str(obj.get("title")) for obj in open_maps} == {"Config", "Params"}
    closed = [obj for obj in _objects(schema) if "properties" in obj]
    assert closed and all(obj["additionalProperties"] is False for obj in closed)
    endpoint = schema["$defs"]["EndpointSection"]["properties"]
    assert endpoint["port"]["maximum"] == 65535
    assert set(AuthoredPolicy.model_fields) == set(schema["properties"])

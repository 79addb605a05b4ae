"""Normalisation of authored policies into the model the prover reasons about."""

from __future__ import annotations

import ipaddress
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.policy.loader import load_policy
from prover.policy.model import Endpoint, Filesystem, HttpRule, Policy, QueryMatcher
from prover.policy.normalize import normalize


def _normalised(text: str) -> Policy:
    return normalize(load_policy(text))


def _endpoint(yaml_endpoint: str) -> Endpoint:
    policy = _normalised(
        f"version: 1\nnetwork_policies:\n  r:\n    endpoints: [{yaml_endpoint}]\n"
        "    binaries: [{path: /usr/bin/curl}]\n"
    )
    return policy.rules[0].endpoints[0]


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("", Filesystem(include_workdir=True, read_only=(), read_write=())),
        ("filesystem_policy: {}", Filesystem(include_workdir=False, read_only=(), read_write=())),
        (
            "filesystem_policy: {include_workdir: true}",
            Filesystem(include_workdir=True, read_only=(), read_write=()),
        ),
        (
            "filesystem_policy: {read_only: [/usr//./lib/, /etc/ssl/], read_write: [/tmp/.]}",
            Filesystem(
                include_workdir=False, read_only=("/usr/lib", "/etc/ssl"), read_write=("/tmp",)
            ),
        ),
        (
            "filesystem_policy: {include_workdir: false, read_write: [/]}",
            Filesystem(include_workdir=False, read_only=(), read_write=("/",)),
        ),
    ],
)
def test_filesystem_defaults_and_paths_follow_the_reference(
    section: str, expected: Filesystem
) -> None:
    assert _normalised(f"version: 1\n{section}\n").filesystem == expected


@pytest.mark.parametrize(
    ("section", "user", "group", "landlock"),
    [
        ("", "", "", "best_effort"),
        ("process: {}\nlandlock: {}", "", "", "best_effort"),
        ("process: {run_as_user: sandbox}", "sandbox", "", "best_effort"),
        ("process: {run_as_user: '1500', run_as_group: root}", "1500", "root", "best_effort"),
        ("landlock: {compatibility: hard_requirement}", "", "", "hard_requirement"),
        ("landlock: {compatibility: best_effort}", "", "", "best_effort"),
    ],
)
def test_process_and_landlock_settings_default_to_empty_and_best_effort(
    section: str, user: str, group: str, landlock: str
) -> None:
    policy = _normalised(f"version: 1\n{section}\n")
    assert (policy.run_as_user, policy.run_as_group) == (user, group)
    assert policy.landlock_compatibility == landlock


@pytest.mark.parametrize(
    ("endpoint", "ports"),
    [
        ("{host: a.example.com, port: 443}", (443,)),
        ("{host: a.example.com, ports: [443, 8443]}", (443, 8443)),
        ("{host: a.example.com, port: 80, ports: [443]}", (443,)),
        ("{host: a.example.com, port: 80, ports: []}", (80,)),
        ("{host: a.example.com, port: 0}", ()),
        ("{host: a.example.com}", ()),
    ],
)
def test_effective_ports_are_ports_else_the_nonzero_port(
    endpoint: str, ports: tuple[int, ...]
) -> None:
    assert _endpoint(endpoint).ports == ports


@pytest.mark.parametrize(
    ("endpoint", "host", "layer", "explicit_tcp"),
    [
        ("{host: API.GitHub.COM, port: 443}", "api.github.com", "l4", False),
        ("{host: '*.Example.com', port: 443, protocol: TCP}", "*.example.com", "l4", True),
        ("{host: db.example.com, port: 5432, protocol: tcp}", "db.example.com", "l4", True),
        ("{port: 443}", "", "l4", False),
        (
            "{host: a.example.com, port: 443, protocol: REST, enforcement: enforce, access: full}",
            "a.example.com",
            "rest",
            False,
        ),
    ],
)
def test_hosts_are_lower_cased_and_protocols_select_the_layer(
    endpoint: str, host: str, layer: str, explicit_tcp: bool
) -> None:
    normalised = _endpoint(endpoint)
    assert (normalised.host, normalised.layer, normalised.explicit_tcp) == (
        host,
        layer,
        explicit_tcp,
    )


def test_allowed_ips_are_parsed_as_networks_and_kept_as_written() -> None:
    endpoint = _endpoint(
        "{host: a.example.com, port: 443, allowed_ips: [10.0.5.7/24, 8.8.8.8, '2001:db8::1']}"
    )
    assert endpoint.allowed_ips == (
        ipaddress.ip_network("10.0.5.0/24"),
        ipaddress.ip_network("8.8.8.8/32"),
        ipaddress.ip_network("2001:db8::1/128"),
    )
    assert endpoint.allowed_ips_raw == ("10.0.5.7/24", "8.8.8.8", "2001:db8::1")


REST = "host: a.example.com, port: 443, protocol: rest, enforcement: enforce"


@pytest.mark.parametrize(
    ("access", "methods"),
    [
        ("read-only", ("GET", "HEAD", "OPTIONS")),
        ("read-write", ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH")),
        ("full", ("*",)),
    ],
)
def test_access_presets_expand_to_method_rules_on_every_path(
    access: str, methods: tuple[str, ...]
) -> None:
    endpoint = _endpoint(f"{{{REST}, access: {access}}}")
    assert endpoint.access == access
    assert endpoint.allow_rules == tuple(
        HttpRule(method=method, path="**", index=index) for index, method in enumerate(methods)
    )


def test_explicit_rules_keep_method_path_query_and_position() -> None:
    endpoint = _endpoint(
        f"{{{REST}, path: '/**', rules: ["
        "{allow: {method: get, path: '/repos/**', query: {per_page: '*', state: open, e: ''}}},"
        "{allow: {method: POST}}],"
        "deny_rules: [{method: DELETE, path: /repos/x}, {method: '*', query: {force: 'true'}}]}"
    )
    assert endpoint.access is None
    assert endpoint.path == "/**"
    assert endpoint.allow_rules == (
        HttpRule(
            method="get",
            path="/repos/**",
            query=(
                QueryMatcher("per_page", None),
                QueryMatcher("state", "open"),
                QueryMatcher("e", ""),
            ),
            index=0,
        ),
        HttpRule(method="POST", path="", index=1),
    )
    assert endpoint.deny_rules == (
        HttpRule(method="DELETE", path="/repos/x", index=0),
        HttpRule(method="*", path="", query=(QueryMatcher("force", "true"),), index=1),
    )


def test_deny_rules_accompany_an_access_preset() -> None:
    endpoint = _endpoint(f"{{{REST}, access: full, deny_rules: [{{method: POST, path: /x}}]}}")
    assert endpoint.allow_rules == (HttpRule(method="*", path="**", index=0),)
    assert endpoint.deny_rules == (HttpRule(method="POST", path="/x", index=0),)


def test_rules_keep_document_order_and_take_the_name_or_the_key() -> None:
    policy = _normalised(
        """\
version: 1
network_policies:
  zeta:
    name: last-alphabetically
    endpoints: [{host: z.example.com, port: 443}, {host: y.example.com, port: 80}]
    binaries: [{path: /usr/bin/b}, {path: '/opt/**'}]
  alpha:
    endpoints: [{host: a.example.com, port: 443}]
  empty: {}
"""
    )
    assert [(rule.key, rule.name) for rule in policy.rules] == [
        ("zeta", "last-alphabetically"),
        ("alpha", "alpha"),
        ("empty", "empty"),
    ]
    zeta = policy.rules[0]
    assert zeta.binaries == ("/usr/bin/b", "/opt/**")
    assert [(ep.index, ep.host) for ep in zeta.endpoints] == [
        (0, "z.example.com"),
        (1, "y.example.com"),
    ]
    assert policy.rules[2].endpoints == () and policy.rules[2].binaries == ()


@pytest.mark.parametrize(
    ("endpoint", "problem"),
    [
        ("{host: a.example.com, port: 443, protocol: graphql}", "protocol 'graphql'"),
        ("{host: a.example.com, port: 443, protocol: websocket, access: full}", "protocol"),
        (f"{{{REST}, access: everything}}", "access 'everything'"),
        (f"{{{REST}, access: full, rules: [{{allow: {{method: GET}}}}]}}", "access 'full'"),
        ("{host: a.example.com, port: 443, access: full}", "access 'full'"),
        ("{host: a.example.com, port: 443, rules: [{allow: {method: GET}}]}", "L4 endpoint"),
        (f"{{{REST}, rules: [{{}}]}}", "rule without a method"),
        (f"{{{REST}, rules: [{{allow: {{path: /x}}}}]}}", "rule without a method"),
        (f"{{{REST}, rules: [{{allow: {{method: GET, tool: x}}}}]}}", "outside the REST model"),
        (f"{{{REST}, rules: [{{allow: {{method: GET, command: x}}}}]}}", "outside the REST model"),
        (
            f"{{{REST}, rules: [{{allow: {{method: GET, query: {{k: {{any: [a]}}}}}}}}]}}",
            "not a plain string",
        ),
        (
            f"{{{REST}, rules: [{{allow: {{method: GET, query: {{k: {{glob: a}}}}}}}}]}}",
            "not a plain string",
        ),
        (f"{{{REST}, rules: [{{allow: {{method: GET, query: {{k: 'git-*'}}}}}}]}}", "a glob"),
        (f"{{{REST}, rules: [{{allow: {{method: GET, query: {{k: 'v?'}}}}}}]}}", "a glob"),
        ("{host: a.example.com, port: 443, allowed_ips: [not-an-ip]}", "invalid allowed_ips"),
        ("{host: a.example.com, port: 443, allowed_ips: [10.0.0.0/33]}", "invalid allowed_ips"),
    ],
)
def test_shapes_the_model_cannot_represent_raise_value_error(endpoint: str, problem: str) -> None:
    text = f"version: 1\nnetwork_policies:\n  r:\n    endpoints: [{endpoint}]\n"
    # A {glob: ...} matcher is the newer schema's: only the reference reading reads it.
    policy = load_policy(text, reference="glob:" in endpoint)
    with pytest.raises(ValueError, match="rule 'r' endpoint 0") as caught:
        normalize(policy)
    assert problem in str(caught.value)


MATCHERS = st.fixed_dictionaries(
    {},
    optional={
        "method": st.sampled_from(["GET", "post", "*", ""]),
        "path": st.sampled_from(["/", "/**", "/a/*", "", "**"]),
        "query": st.dictionaries(
            st.sampled_from(["q", "page"]),
            st.sampled_from(["*", "x", "", "git-*", "a.b"]) | st.just({"any": ["a"]}),
            max_size=2,
        ),
        "tool": st.sampled_from(["t", "x*"]),
        "command": st.just("SELECT"),
    },
)
ENDPOINTS = st.fixed_dictionaries(
    {},
    optional={
        "host": st.sampled_from(["API.example.com", "*.example.com", "10.0.0.1", ""]),
        "port": st.integers(0, 65535),
        "ports": st.lists(st.integers(0, 65535), max_size=3),
        "path": st.sampled_from(["/**", "/v1", ""]),
        "protocol": st.sampled_from(["", "tcp", "REST", "rest", "graphql", "mcp", "x"]),
        "enforcement": st.sampled_from(["enforce", "audit"]),
        "access": st.sampled_from(["read-only", "read-write", "full", "bogus"]),
        "rules": st.lists(
            st.fixed_dictionaries({}, optional={"allow": MATCHERS}), min_size=1, max_size=3
        ),
        "deny_rules": st.lists(MATCHERS, min_size=1, max_size=2),
        "allowed_ips": st.lists(
            st.sampled_from(["10.0.0.0/8", "8.8.8.8", "::/0", "bad", "10.0.0.0/40"]), max_size=2
        ),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ENDPOINTS, max_size=3), st.booleans())
def test_normalize_returns_a_policy_or_raises_value_error_for_any_loaded_policy(
    endpoints: list[dict[str, object]], with_filesystem: bool
) -> None:
    document: dict[str, object] = {
        "version": 1,
        "network_policies": {"r": {"endpoints": endpoints, "binaries": [{"path": "/b"}]}},
    }
    if with_filesystem:
        document["filesystem_policy"] = {"read_only": ["/usr//lib/"]}
    policy = load_policy(json.dumps(document))
    try:
        result = normalize(policy)
    except ValueError as error:
        assert str(error).startswith("rule 'r' endpoint ")
    else:
        assert isinstance(result, Policy)
        assert len(result.rules[0].endpoints) == len(endpoints)

"""The OpenShell CLI's command forms and its ``policy update`` spec parsers."""

from __future__ import annotations

import pytest

from server.hooks.openshell import (
    PolicyFile,
    PolicyUpdate,
    SpecError,
    Unverifiable,
    actions,
    build_endpoint_proposals,
    generated_rule_name,
    group_allow_rules,
    parse,
    parse_endpoint_spec,
)
from server.hooks.shell import split_commands


def _actions(text: str, environ: dict[str, str] | None = None) -> list[object]:
    env = environ or {}
    return actions(split_commands(text, "/p", env), env)


def test_rule_names_are_generated_as_the_cli_does() -> None:
    assert generated_rule_name("api.github.com", 443) == "allow_api_github_com_443"
    assert generated_rule_name("my-host.*.example", 8080) == "allow_my_host__example_8080"


def test_an_endpoint_spec_becomes_the_authored_endpoint() -> None:
    assert parse_endpoint_spec("ghcr.io:443") == {"host": "ghcr.io", "port": 443}
    assert parse_endpoint_spec(
        "rt.example.com:443:read-write:websocket:enforce:websocket-credential-rewrite,"
        "allowed-ip=10.0.0.0/8,allow-uninspected-credentials"
    ) == {
        "host": "rt.example.com",
        "port": 443,
        "protocol": "websocket",
        "enforcement": "enforce",
        "access": "read-write",
        "websocket_credential_rewrite": True,
        "allowed_ips": ["10.0.0.0/8"],
        "allow_uninspected_credentials": True,
    }
    assert parse_endpoint_spec("db:5432::tcp") == {"host": "db", "port": 5432, "protocol": "tcp"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("host", "expects host:port[:access"),
        ("host:0", "port must be in the range 1-65535"),
        ("host:https", "port segment must be a base-10 integer"),
        ("host:443:", "empty access segment"),
        ("host:443:write-ish", "access segment must be one of"),
        ("host:443::grpc", "protocol segment must be 'tcp', 'rest', 'websocket', or 'sql'"),
        ("host:443:::enforce", "cannot set enforcement without protocol"),
        ("host:443:full:tcp", "protocol 'tcp' does not support access or enforcement"),
        ("host:443::rest:strict", "enforcement segment must be 'enforce' or 'audit'"),
        ("host:443::tcp::request-body-credential-rewrite", "requires --add-endpoint protocol"),
        ("host:443::rest:enforce:bogus", "options segment supports only"),
        ("a/b:443", "host must not contain '/'"),
    ],
)
def test_an_endpoint_spec_the_cli_refuses_is_an_error(spec: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("[", r"\[")):
        parse_endpoint_spec(spec)


def test_proposals_carry_the_binaries_and_rule_name() -> None:
    (proposal,) = build_endpoint_proposals(
        ["api.github.com:443:read-only:rest:enforce"], ["/usr/bin/gh", " /usr/bin/gh "], "gh"
    )
    assert proposal == {
        "rule_name": "gh",
        "rule": {
            "name": "gh",
            "endpoints": [
                {
                    "host": "api.github.com",
                    "port": 443,
                    "protocol": "rest",
                    "enforcement": "enforce",
                    "access": "read-only",
                }
            ],
            "binaries": [{"path": "/usr/bin/gh"}],
        },
    }
    with pytest.raises(SpecError, match="--rule-name is only supported"):
        build_endpoint_proposals(["a:1", "b:2"], [], "x")
    with pytest.raises(SpecError, match="--binary can only be used with --add-endpoint"):
        build_endpoint_proposals([], ["/bin/sh"], None)


def test_allow_rules_are_grouped_by_host_and_port_in_order() -> None:
    assert group_allow_rules(["b.io:443:get:/x", "a.io:443:POST:/y", "b.io:443:PUT:**"]) == [
        ("a.io", 443, ({"allow": {"method": "POST", "path": "/y"}},)),
        (
            "b.io",
            443,
            (
                {"allow": {"method": "GET", "path": "/x"}},
                {"allow": {"method": "PUT", "path": "**"}},
            ),
        ),
    ]
    with pytest.raises(SpecError, match="path must start with '/' or be '\\*\\*'"):
        group_allow_rules(["a.io:443:GET:x"])


def test_the_command_forms() -> None:
    found = _actions(
        "openshell policy set s --policy a.yaml; openshell sb create --policy=/abs/b.yaml -- x; "
        "OPENSHELL_SANDBOX_POLICY=c.yaml openshell sandbox create; "
        "OPENSHELL_SANDBOX_POLICY=d.yaml ./run-supervisor; "
        "openshell policy update s --add-endpoint h.io:443 --add-allow 'k.io:80:GET:/'"
    )
    assert [(type(a).__name__, getattr(a, "path", None)) for a in found] == [
        ("PolicyFile", "/p/a.yaml"),
        ("PolicyFile", "/abs/b.yaml"),
        ("PolicyFile", "/p/c.yaml"),
        ("PolicyFile", "/p/d.yaml"),
        ("PolicyUpdate", None),
    ]
    update = found[-1]
    assert isinstance(update, PolicyUpdate)
    assert [p["rule_name"] for p in update.proposals] == ["allow_h_io_443"]
    assert update.allow_groups == (("k.io", 80, ({"allow": {"method": "GET", "path": "/"}},)),)


def test_create_uses_the_inherited_environment_variable_or_cannot_be_checked() -> None:
    (found,) = _actions("openshell sandbox create -- sh", {"OPENSHELL_SANDBOX_POLICY": "/e.yaml"})
    assert isinstance(found, PolicyFile) and found.path == "/e.yaml"
    (found,) = _actions("openshell sandbox create -- sh")
    assert isinstance(found, Unverifiable)


@pytest.mark.parametrize(
    "text",
    [
        "openshell policy update s --add-endpoint h:443 --dry-run",
        "openshell policy update s --remove-endpoint h:443 --add-deny 'h:443:GET:/x'",
        "openshell policy set --help",
        "openshell policy list s",
        "OPENSHELL_SANDBOX_POLICY= openshell sandbox list",
        "echo openshell policy set s --policy a.yaml",
    ],
)
def test_commands_that_apply_nothing(text: str) -> None:
    assert _actions(text) == []


@pytest.mark.parametrize(
    ("args", "path", "policy"),
    [
        # Global options anywhere, clustered, attached or with `=` (main.rs, struct Cli).
        ("-vg gw policy set sb --policy p.yaml", ["policy", "set"], ["p.yaml"]),
        ("-vggw pol set --policy=p.yaml", ["policy", "set"], ["p.yaml"]),
        ("-g=gw -vv policy set sb --workspace w --policy p.yaml", ["policy", "set"], ["p.yaml"]),
        ("policy -g gw set --gateway-insecure --policy p.yaml", ["policy", "set"], ["p.yaml"]),
        # --gpu takes an optional value: an option after it stays an option.
        ("sandbox create --gpu --policy p.yaml -- x", ["sandbox", "create"], ["p.yaml"]),
        ("sb create --gpu 2 --policy p.yaml", ["sandbox", "create"], ["p.yaml"]),
        # A value that looks like an option is not taken (clap refuses it).
        ("sandbox create --name --policy p.yaml", ["sandbox", "create"], ["p.yaml"]),
        # After --, everything is the sandbox's command.
        ("sandbox create -- openshell --policy q.yaml", ["sandbox", "create"], None),
        ("sandbox list --policy p.yaml", ["sandbox", "list"], None),
    ],
)
def test_the_cli_is_read_as_clap_reads_it(args: str, path: list[str], policy: object) -> None:
    parsed = parse(args.split())
    assert parsed.path == path
    assert parsed.options.get("--policy") == policy


def test_help_unknown_words_and_draft_approval() -> None:
    assert parse("policy set -vh --policy p.yaml".split()).help
    assert parse(["policy", None, "--policy", "p.yaml"]).unknown is not None
    (found,) = _actions("openshell rl approve sb --chunk-id 7")
    assert isinstance(found, Unverifiable) and "approving draft rules" in found.reason
    (found,) = _actions("openshell policy set sb --policy $UNKNOWN_POLICY")
    assert isinstance(found, PolicyFile) and found.path is None
    found = _actions(
        "openshell sandbox create --policy a.yaml", {"OPENSHELL_SANDBOX_POLICY": "/e.yaml"}
    )
    assert [a.path for a in found] == ["/p/a.yaml"]  # --policy wins over the variable


def test_an_unknown_word_in_the_sandbox_command_does_not_matter() -> None:
    (found,) = _actions("openshell sandbox create --policy /abs/p.yaml -- $AGENT_CMD --x")
    assert isinstance(found, PolicyFile) and found.path == "/abs/p.yaml"

"""End to end from authored YAML (loader + normalisation) to concrete verdicts."""

from __future__ import annotations

import ipaddress

import pytest

from prover.concrete import allows, denying_entries, granting_entries
from prover.policy.loader import load_policy
from prover.policy.model import FilesystemAction, NetworkAction, Policy
from prover.policy.normalize import normalize

# Deliberately mixes exact and wildcard hosts on one port, which the boundary check
# refuses as a shape; the evaluator still gives it the reference's meaning.
POLICY_TEXT = """\
version: 1
filesystem_policy:
  read_only: [/usr, /etc/ssl/]
  read_write: [/tmp//cache/.]
network_policies:
  github:
    binaries: [{path: /usr/bin/git}, {path: /usr/local/**}]
    endpoints:
      - {host: API.GitHub.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}
      - host: uploads.github.com
        ports: [443, 8443]
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: get, path: "/repos/*", query: {page: "*", v: "2"}}
          - allow: {method: POST, path: "/repos/*/assets"}
  everything:
    binaries: [{path: /usr/bin/curl}]
    endpoints:
      - {host: "*.github.com", port: 443}
  guard:
    binaries: [{path: /bin/bash}]
    endpoints:
      - host: uploads.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        access: full
        deny_rules: [{method: POST, path: "/repos/**"}]
"""


@pytest.fixture(scope="module")
def policy() -> Policy:
    return normalize(load_policy(POLICY_TEXT))


def rest(
    method: str,
    path: str,
    host: str = "uploads.github.com",
    *,
    binary: str | None = None,
    ancestor: str | None = None,
    query: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ip: str = "8.8.8.8",
) -> NetworkAction:
    return NetworkAction(
        host=host,
        port=443,
        destination_ip=ipaddress.ip_address(ip),
        protocol="rest",
        method=method,
        path=path,
        query=query,
        binary=binary,
        ancestor_binary=ancestor or binary,
        binary_identity_required=binary is not None,
    )


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (FilesystemAction("read", "/etc/ssl"), True),
        (FilesystemAction("write", "/tmp/cache"), True),
        (FilesystemAction("write", "/tmp"), False),
        (FilesystemAction("read", "/usr/lib"), False),
    ],
)
def test_filesystem_paths_are_normalised_by_the_loader(
    policy: Policy, action: FilesystemAction, expected: bool
) -> None:
    assert allows(policy, action) is expected


def test_preset_and_lowercase_get_grant_head(policy: Policy) -> None:
    git = "/usr/bin/git"
    assert allows(policy, rest("HEAD", "/anything", "api.github.com", binary=git))
    assert not allows(policy, rest("POST", "/anything", "api.github.com", binary=git))
    page = (("page", ("1",)), ("v", ("2",)))
    assert allows(policy, rest("HEAD", "/repos/x", binary=git, query=page))
    dotted = (("page", ("1.5",)), ("v", ("2",)))
    assert not allows(policy, rest("GET", "/repos/x", binary=git, query=dotted))


def test_guard_deny_blocks_posts_for_bash_and_its_children_only(policy: Policy) -> None:
    tool = "/usr/local/bin/tool"
    assert allows(policy, rest("POST", "/repos/x/assets", binary=tool))
    assert not allows(policy, rest("POST", "/repos/x/assets", binary=tool, ancestor="/bin/bash"))
    assert denying_entries(policy, rest("POST", "/repos/x/assets", binary="/bin/bash")) == [
        ("guard", 0, 0)
    ]
    # With identity enforcement off the deny binds every process.
    assert not allows(policy, rest("POST", "/repos/x/assets"))


def test_wildcard_rule_grants_public_addresses_only(policy: Policy) -> None:
    curl = "/usr/bin/curl"
    assert granting_entries(policy, rest("DELETE", "/", "api.github.com", binary=curl)) == [
        ("everything", 0, None)
    ]
    assert allows(policy, rest("DELETE", "/", "api.github.com", binary=curl))
    assert not allows(policy, rest("DELETE", "/", "api.github.com", binary=curl, ip="10.0.0.1"))

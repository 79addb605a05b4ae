"""The closest boundary entries and the exact dimensions on which each fails."""

from __future__ import annotations

from typing import Any

import pytest

from prover.explain.closest import closest_boundary_rules
from prover.policy.loader import load_policy
from prover.policy.normalize import normalize
from prover.results import (
    FilesystemCounterexample,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
)

BOUNDARY = """\
version: 1
filesystem_policy: { read_only: [/data] }
process: { run_as_user: sandbox }
landlock: { compatibility: hard_requirement }
network_policies:
  api:
    endpoints:
      - host: api.example.com
        port: 443
        protocol: rest
        enforcement: enforce
        allowed_ips: [8.8.8.0/24]
        rules: [{ allow: { method: GET, path: /v1/**, query: { page: '*' } } }]
        deny_rules: [{ method: GET, path: /v1/admin }]
    binaries: [{ path: /usr/bin/curl }]
  open:
    endpoints: [{ host: open.example.com, port: 443 }]
    binaries: []
"""


def _network(**changes: Any) -> NetworkCounterexample:
    fields: dict[str, Any] = {
        "binary": None,
        "ancestor_binary": None,
        "binary_identity_required": False,
        "host": "api.example.com",
        "destination_ip": "8.8.8.8",
        "trusted_gateway": False,
        "port": 443,
        "protocol": "rest",
        "method": "GET",
        "path": "/v1/items",
        "query_params": {"page": ["2"]},
    }
    fields.update(changes)
    return NetworkCounterexample(**fields)


@pytest.mark.parametrize(
    ("changes", "dimensions"),
    [
        pytest.param({"host": "evil.example.com"}, ["host"], id="host"),
        pytest.param({"port": 8443}, ["port"], id="port"),
        pytest.param({"protocol": "l4", "method": None, "path": None}, ["layer"], id="layer"),
        pytest.param({"method": "POST"}, ["method"], id="method"),
        pytest.param({"path": "/v2/items"}, ["path"], id="path"),
        pytest.param({"query_params": {"page": ["a.b"]}}, ["query"], id="query"),
        pytest.param({"destination_ip": "9.9.9.9"}, ["destination_ip"], id="destination-ip"),
        pytest.param({"path": "/v1/admin"}, ["deny_rule"], id="deny-rule"),
        pytest.param(
            {
                "binary_identity_required": True,
                "binary": "/usr/bin/wget",
                "ancestor_binary": "/usr/bin/wget",
            },
            ["binary"],
            id="binary",
        ),
    ],
)
def test_each_network_dimension_is_reported_on_its_own(
    changes: dict[str, Any], dimensions: list[str]
) -> None:
    boundary = normalize(load_policy(BOUNDARY))

    closest = closest_boundary_rules(boundary, _network(**changes))

    assert closest[0].path == "network_policies.api.endpoints[0]"
    assert [m.dimension for m in closest[0].fails_on] == dimensions


def test_a_rule_without_binaries_fails_on_the_identity_mode() -> None:
    boundary = normalize(load_policy(BOUNDARY))
    cex = _network(
        host="open.example.com",
        protocol="l4",
        method=None,
        path=None,
        query_params=None,
        binary_identity_required=True,
        binary="/usr/bin/curl",
        ancestor_binary="/usr/bin/curl",
    )

    closest = closest_boundary_rules(boundary, cex)

    assert closest[0].rule_key == "open"
    assert [m.dimension for m in closest[0].fails_on] == ["identity_mode"]


def test_entries_are_ranked_by_how_many_dimensions_fail() -> None:
    boundary = normalize(load_policy(BOUNDARY))

    closest = closest_boundary_rules(
        boundary, _network(host="open.example.com", port=8443, path="/x")
    )

    counts = [len(rule.fails_on) for rule in closest]
    assert counts == [1, 3]
    assert closest[0].rule_key == "open"
    assert [m.dimension for m in closest[1].fails_on] == ["host", "port", "path"]


@pytest.mark.parametrize(
    ("cex", "dimension", "path"),
    [
        pytest.param(
            FilesystemCounterexample(access="write", path="/data"),
            "filesystem_access",
            "filesystem_policy.read_only[0]",
            id="filesystem",
        ),
        pytest.param(
            ProcessCounterexample(field="run_as_user", boundary="sandbox", candidate="root"),
            "process_field",
            "process.run_as_user",
            id="process",
        ),
        pytest.param(
            LandlockCounterexample(boundary="hard_requirement", candidate="best_effort"),
            "landlock",
            "landlock.compatibility",
            id="landlock",
        ),
    ],
)
def test_settings_and_paths_name_their_dimension(cex: object, dimension: str, path: str) -> None:
    boundary = normalize(load_policy(BOUNDARY))

    closest = closest_boundary_rules(boundary, cex)

    assert closest[0].path == path
    assert [m.dimension for m in closest[0].fails_on] == [dimension]


def test_a_boundary_without_any_grant_of_the_kind_has_no_closest_entry() -> None:
    boundary = normalize(load_policy("version: 1\nfilesystem_policy: {}\n"))

    assert (
        closest_boundary_rules(boundary, FilesystemCounterexample(access="read", path="/x")) == []
    )
    assert closest_boundary_rules(boundary, _network()) == []


def test_among_entries_failing_on_host_alone_the_nearest_domain_comes_first() -> None:
    boundary = normalize(
        load_policy(
            "version: 1\nnetwork_policies:\n  r:\n    binaries: [{path: /usr/bin/curl}]\n"
            "    endpoints:\n"
            "      - {host: integrate.api.nvidia.com, port: 443}\n"
            "      - {host: marketplace.visualstudio.com, port: 443}\n"
        )
    )
    closest = closest_boundary_rules(
        boundary, _network(host="a.visualstudio.com", protocol="l4", method=None, path=None)
    )
    assert [m.dimension for m in closest[0].fails_on] == ["host"]
    assert closest[0].path == "network_policies.r.endpoints[1]"

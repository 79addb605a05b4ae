"""The runtime model the campaign judges extended verdicts with: one test per runtime
fact it encodes, and planted wrong verdicts that the runtime judge must catch."""

from __future__ import annotations

import ipaddress
import random

from prover.policy.loader import load_policy
from prover.results import CheckOutcome, NetworkCounterexample
from tests.soundness.oracle import judge
from tests.soundness.runtime import (
    SELECTIONS,
    Connection,
    Http,
    Message,
    Raw,
    Selection,
    allowed_every,
    allowed_some,
    allowed_under,
    runtime_policy,
)

PUBLIC = ipaddress.ip_address("8.8.8.8")


def rt(rules: str, middlewares: str = ""):
    return runtime_policy(load_policy(f"version: 1\nnetwork_policies:\n{rules}{middlewares}"))


def conn(host: str = "api.example.com", port: int = 443, ip: str = "8.8.8.8") -> Connection:
    return Connection(host=host, port=port, ip=ipaddress.ip_address(ip))


REST_GET = """  a:
    endpoints:
    - host: api.example.com
      port: 443
      protocol: rest
      enforcement: enforce
      rules: [{allow: {method: GET, path: /v1/**}}]
"""
L4 = """  b:
    endpoints:
    - host: api.example.com
      port: 443
"""


def test_a_plain_l4_endpoint_is_a_raw_tunnel() -> None:
    policy = rt(L4)
    assert allowed_every(policy, Raw(conn()))
    assert allowed_every(policy, Http(conn(), "DELETE", "/x"))
    assert not allowed_some(policy, Raw(conn(port=80)))
    assert allowed_every(policy, Raw(conn(ip="10.0.0.1")))  # an exact host may be private


def test_an_l4_endpoint_beside_rest_gives_no_raw_access() -> None:
    policy = rt(REST_GET + L4)
    assert not allowed_some(policy, Raw(conn()))
    assert not allowed_some(policy, Http(conn(), "DELETE", "/v1/x"))
    assert allowed_every(policy, Http(conn(), "GET", "/v1/x"))


def test_audit_forwards_every_request_and_denies_do_not_block() -> None:
    audit = REST_GET.replace("enforce\n", "audit\n") + "      deny_rules: [{method: '*'}]\n"
    policy = rt(audit)
    assert allowed_every(policy, Http(conn(), "DELETE", "/anything"))
    assert not allowed_some(policy, Raw(conn()))


def test_the_most_specific_selector_picks_enforce_or_audit() -> None:
    two = """  a:
    endpoints:
    - host: api.example.com
      port: 443
      protocol: rest
      enforcement: audit
      rules: [{allow: {method: GET, path: /**}}]
    - host: api.example.com
      port: 443
      path: /admin/**
      protocol: rest
      enforcement: enforce
      rules: [{allow: {method: GET, path: /admin/read}}]
"""
    policy = rt(two)
    assert allowed_every(policy, Http(conn(), "POST", "/v1/x"))  # audit endpoint selected
    assert not allowed_some(policy, Http(conn(), "POST", "/admin/x"))  # enforce selected
    assert allowed_every(policy, Http(conn(), "GET", "/admin/x"))  # union of allow rules


def test_tls_skip_on_the_first_config_is_uninspected() -> None:
    policy = rt(REST_GET + "      tls: skip\n")
    assert allowed_every(policy, Raw(conn()))
    assert allowed_every(policy, Http(conn(), "DELETE", "/x"))


def test_the_first_configs_allowed_ips_apply_in_rule_order() -> None:
    rules = """  zeta:
    endpoints:
    - {host: api.example.com, port: 443, allowed_ips: [10.0.0.0/8]}
  alpha:
    endpoints:
    - {host: api.example.com, port: 443, allowed_ips: [8.8.8.0/24]}
"""
    policy = rt(rules)
    public, private = Raw(conn()), Raw(conn(ip="10.1.1.1"))
    assert allowed_under(policy, public, Selection("sorted"))
    assert not allowed_under(policy, private, Selection("sorted"))
    assert allowed_under(policy, private, Selection("declared"))
    assert allowed_some(policy, public) and not allowed_every(policy, public)


def test_a_hostless_endpoint_matches_every_host_inside_its_addresses() -> None:
    policy = rt("  a:\n    endpoints:\n    - {port: 5432, allowed_ips: [10.0.0.0/8]}\n")
    assert allowed_every(policy, Raw(conn("db.corp.example", 5432, "10.2.3.4")))
    assert not allowed_some(policy, Raw(conn("db.corp.example", 5432, "8.8.8.8")))


def test_binaries_gate_every_rule_with_identity_on() -> None:
    policy = rt(L4 + "    binaries: [{path: /usr/bin/curl}]\n")
    mine = Connection("api.example.com", 443, PUBLIC, "/usr/bin/x", "/usr/bin/curl", True)
    other = Connection("api.example.com", 443, PUBLIC, "/usr/bin/x", "/bin/sh", True)
    assert allowed_every(policy, Raw(mine)) and not allowed_some(policy, Raw(other))


OPAQUE = """  a:
    endpoints:
    - host: api.example.com
      port: 443
      protocol: mcp
      enforcement: enforce
      rules: [{allow: {method: tools/call, tool: search}}]
"""


def test_an_opaque_message_passes_only_an_identical_config_or_a_raw_tunnel() -> None:
    mcp = rt(OPAQUE)
    config = mcp.rules[0].endpoints[0].config
    message = Message(conn(), "/", config)
    assert allowed_every(mcp, message)
    assert allowed_every(rt(L4), message)
    assert not allowed_some(rt(OPAQUE.replace("search", "delete")), message)
    assert not allowed_some(mcp, Raw(conn()))
    assert not allowed_some(mcp, Http(conn(), "GET", "/"))


def test_a_fail_closed_middleware_blocks_uninspectable_traffic_only() -> None:
    middleware = """network_middlewares:
  dlp:
    middleware: corp/dlp
    endpoints: {include: ['*.example.com']}
"""
    policy = rt(L4, middleware)
    assert not allowed_some(policy, Raw(conn()))
    open_policy = rt(L4, middleware + "    on_error: fail_open\n")
    assert allowed_every(open_policy, Raw(conn()))


def test_every_selection_is_offered() -> None:
    assert len(set(SELECTIONS)) == 4


# -- the judge ------------------------------------------------------------------------------
def policy(rules: str) -> str:
    return f"version: 1\nnetwork_policies:\n{rules}"


def test_a_false_within_for_an_uncovered_opaque_endpoint_is_unsound() -> None:
    candidate = policy(OPAQUE.replace("search", "delete_repo"))
    findings, _ = judge(candidate, policy(OPAQUE), CheckOutcome.within(), random.Random(1))
    assert [f.kind for f in findings] == ["unsound_within"]


def test_a_false_within_for_raw_access_beside_nothing_is_unsound() -> None:
    candidate = policy(REST_GET.replace("enforce\n", "audit\n"))
    findings, _ = judge(candidate, policy(REST_GET), CheckOutcome.within(), random.Random(1))
    assert [f.kind for f in findings] == ["unsound_within"]


def test_an_identical_opaque_endpoint_and_raw_l4_cover_the_candidate() -> None:
    for boundary in (OPAQUE, L4):
        findings, checked = judge(
            policy(OPAQUE), policy(boundary), CheckOutcome.within(), random.Random(2)
        )
        assert findings == [] and checked > 5, boundary


def _cex(**fields: object) -> NetworkCounterexample:
    base: dict[str, object] = dict(
        binary=None,
        ancestor_binary=None,
        binary_identity_required=False,
        host="api.example.com",
        destination_ip="8.8.8.8",
        trusted_gateway=False,
        port=443,
        protocol="rest",
        method="POST",
        path="/v1/x",
    )
    base.update(fields)
    return NetworkCounterexample.model_validate(base)


def test_an_exceed_the_runtime_boundary_may_allow_is_a_replay_failure() -> None:
    # The boundary audits: a POST the reference model would refuse passes at runtime.
    boundary = policy(REST_GET.replace("enforce\n", "audit\n"))
    outcome = CheckOutcome.exceeds(_cex())
    findings, _ = judge(policy(L4), boundary, outcome, random.Random(1))
    assert [f.kind for f in findings] == ["replay_failure"]
    assert "runtime model" in findings[0].detail

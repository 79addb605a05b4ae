"""Minimal regression pairs from the soundness campaign (shrunk from generated pairs).

Each case names the campaign pair it was shrunk from (``--seed S --start I --pairs 1``
rebuilds it) and a concrete action the candidate allows and the boundary refuses. The
right verdict is ``exceeds_boundary`` with a counterexample that replays.

When found, the star-segment cases were *unsound* ``within_boundary`` verdicts: the
string oracle read a model value it could not decode (Z3 chose a NUL character for a ``*``
segment) as "no string exists" and learned that as a fact. The selector cases were
``invalid_witness`` (no readable witness found for an obvious exceed). A case that is
still open carries a strict ``xfail`` naming the bug (``open_bug``); fixing the prover
turns it into an XPASS failure, the signal to drop the marker.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pytest

from prover.api import check_boundary
from prover.concrete import allows
from prover.concrete.witness import replays
from prover.policy.model import NetworkAction
from prover.results import Verdict
from tests.soundness.oracle import load

EMPTY = "version: 1\n"


def rest_policy(host: str, ports: str, method: str, path: str, selector: str = "") -> str:
    selector_line = f"\n        path: '{selector}'" if selector else ""
    return f"""version: 1
network_policies:
  r:
    endpoints:
      - host: '{host}'
        ports: {ports}
        protocol: rest
        enforcement: enforce{selector_line}
        rules:
          - allow: {{method: {method}, path: '{path}'}}
"""


def get(host: str, port: int, path: str, ip: str = "8.8.8.8") -> NetworkAction:
    return NetworkAction(
        host=host,
        port=port,
        destination_ip=ipaddress.ip_address(ip),
        protocol="rest",
        method="GET",
        path=path,
    )


@dataclass(frozen=True)
class Regression:
    name: str
    origin: str
    candidate: str
    boundary: str
    action: NetworkAction
    open_bug: str = ""


CASES: tuple[Regression, ...] = (
    Regression(
        "a star segment before a literal is wider than one instance of it",
        "seed 2, shrunk by hand from pair 1684",
        rest_policy("a.com", "[443]", "GET", "/*/x"),
        rest_policy("a.com", "[443]", "GET", "/a/x"),
        get("a.com", 443, "/b/x"),
    ),
    Regression(
        "two star segments are wider than a literal segment then a star",
        "seed 2, shrunk by hand from pair 1684",
        rest_policy("a.com", "[443]", "GET", "/*/*"),
        rest_policy("a.com", "[443]", "GET", "/a/*"),
        get("a.com", 443, "/b/c"),
    ),
    Regression(
        "a REST endpoint whose first port is a control port exceeds an empty boundary",
        "seed 2, pair 1684 shrunk automatically, then by hand",
        rest_policy("host.openshell.internal", "[2379, 5432]", "PUT", "/repos/*/*/issues"),
        EMPTY,
        NetworkAction(
            host="host.openshell.internal",
            port=5432,
            destination_ip=ipaddress.ip_address("8.8.8.8"),
            protocol="rest",
            method="PUT",
            path="/repos/a/b/issues",
        ),
    ),
    Regression(
        "an IPv4-literal REST endpoint with star segments exceeds an empty boundary",
        "seed 1, pair 1063 shrunk automatically",
        rest_policy("203.0.113.7", "[443]", "PURGE", "/repos/*/*/issues"),
        EMPTY,
        NetworkAction(
            host="203.0.113.7",
            port=443,
            destination_ip=ipaddress.ip_address("203.0.113.7"),
            protocol="rest",
            method="PURGE",
            path="/repos/a/b/issues",
        ),
    ),
    Regression(
        "a binary added to a rule with star segments exceeds in identity mode",
        "seed 1, pair 5313 shrunk automatically (**.internal then: a TLD wildcard the "
        "runtime now refuses)",
        rest_policy("**.api.internal", "[443]", "PURGE", "/repos/*/*/issues")
        + "    binaries: [{path: /usr/bin/python3}, {path: /usr/bin/gh}]\n",
        rest_policy("**.api.internal", "[443]", "PURGE", "/**")
        + "    binaries: [{path: /usr/bin/python3}]\n",
        NetworkAction(
            host="deep.api.internal",
            port=443,
            destination_ip=ipaddress.ip_address("8.8.8.8"),
            protocol="rest",
            method="PURGE",
            path="/repos/a/b/issues",
            binary="/usr/bin/gh",
            ancestor_binary="/usr/bin/gh",
            binary_identity_required=True,
        ),
    ),
    Regression(
        "any path is wider than the root path",
        "seed 1, shrunk by hand from pair 9539 (after the fix, so not confirmed minimal)",
        rest_policy("registry.npmjs.org", "[8080]", "DELETE", "**"),
        rest_policy("registry.npmjs.org", "[8080]", "DELETE", "/"),
        NetworkAction(
            host="registry.npmjs.org",
            port=8080,
            destination_ip=ipaddress.ip_address("8.8.8.8"),
            protocol="rest",
            method="DELETE",
            path="/repos/",
        ),
    ),
    Regression(
        "a selector with a star and a rule path starting with a double star intersect",
        "seed 2, pairs 46 and 443 shrunk automatically",
        rest_policy("*.example.com", "[8080]", "GET", "/**/git-upload-pack", selector="/api/*"),
        EMPTY,
        get("a.example.com", 8080, "/api/git-upload-pack"),
    ),
    Regression(
        "a recursive selector and a rule path starting with a double star intersect",
        "seed 2, pair 474 shrunk automatically",
        rest_policy("*.example.com", "[80]", "GET", "/**/git-upload-pack", selector="/repos/**"),
        EMPTY,
        get("a.example.com", 80, "/repos/git-upload-pack"),
    ),
    Regression(
        "a versioned selector and a rule path with a double star and a star intersect",
        "seed 2, pair 963 shrunk automatically",
        rest_policy("example.com", "[8080]", "OPTIONS", "/**/info/refs*", selector="/v1/**"),
        EMPTY,
        NetworkAction(
            host="example.com",
            port=8080,
            destination_ip=ipaddress.ip_address("8.8.8.8"),
            protocol="rest",
            method="OPTIONS",
            path="/v1/info/refs",
        ),
    ),
)


def _marks(case: Regression) -> list[pytest.MarkDecorator]:
    return [pytest.mark.xfail(strict=True, reason=case.open_bug)] if case.open_bug else []


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_regression_action_is_allowed_by_the_candidate_and_refused_by_the_boundary(
    case: Regression,
) -> None:
    assert allows(load(case.candidate), case.action)
    assert not allows(load(case.boundary), case.action)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=_marks(c)) for c in CASES])
def test_the_regression_pair_exceeds_with_a_counterexample_that_replays(
    case: Regression,
) -> None:
    outcome = check_boundary(case.candidate, case.boundary).outcome
    assert outcome.verdict is Verdict.EXCEEDS, (outcome.verdict, outcome.reason)
    assert replays(load(case.candidate), load(case.boundary), outcome.counterexample)


# -- middlewares and uninspected traffic (found by the runtime-model oracle) ---------------
#: A fail-closed middleware selecting the host (``on_error`` defaults to ``fail_closed``).
MIDDLEWARE = """network_middlewares:
  dlp:
    middleware: corp/dlp
    endpoints: {include: ['*.example.com']}
"""
REST_GET = """version: 1
network_policies:
  r:
    endpoints:
    - host: api.example.com
      port: 443
      protocol: rest
      enforcement: enforce
      rules: [{allow: {method: GET, path: /v1/**}}]
"""
L4_ONLY = """version: 1
network_policies:
  r:
    endpoints:
    - {host: api.example.com, port: 443}
"""


def test_tls_skip_under_a_fail_closed_middleware_covers_nothing() -> None:
    """Was an unsound ``within_boundary``: the boundary's ``tls: skip`` tunnel was read as
    raw L4 access, but a fail-closed middleware selecting the host refuses uninspectable
    traffic, so the boundary allows nothing there while the candidate's inspected GET
    passes the same middleware."""
    candidate = REST_GET + MIDDLEWARE
    boundary = REST_GET.replace("enforcement: enforce", "enforcement: enforce\n      tls: skip")
    outcome = check_boundary(candidate, boundary + MIDDLEWARE).outcome
    assert outcome.verdict is not Verdict.WITHIN, outcome
    # Without the middleware the tunnel is raw access and the pair is within.
    assert check_boundary(REST_GET, boundary).outcome.verdict is Verdict.WITHIN


def test_a_raw_l4_witness_to_a_host_a_fail_closed_middleware_selects_is_not_published() -> None:
    """Was an ``exceeds_boundary`` whose witness (a raw L4 connection) the runtime refuses:
    a fail-closed middleware selecting the host drops uninspectable traffic."""
    outcome = check_boundary(L4_ONLY + MIDDLEWARE, REST_GET + MIDDLEWARE).outcome
    cex = outcome.counterexample
    assert not (outcome.verdict is Verdict.EXCEEDS and cex is not None and cex.protocol == "l4")
    assert "middleware" in (outcome.reason or "") or outcome.verdict is Verdict.EXCEEDS
    # Without the middleware the raw witness is genuine.
    plain = check_boundary(L4_ONLY, REST_GET).outcome
    assert plain.verdict is Verdict.EXCEEDS and plain.counterexample.protocol == "l4"


def test_an_audit_endpoint_alone_on_its_connection_forwards_requests_outside_its_path() -> None:
    """Was an unsound ``within_boundary`` (campaign seed 1, pair 3268, shrunk): the
    runtime checks an endpoint's ``path`` only to choose among several configurations;
    the only one is chosen for every request, and in audit mode forwards it."""
    audit = rest_policy("api.example.com", "[443]", "GET", "/api/**", selector="/api/**")
    audit = audit.replace("enforcement: enforce", "enforcement: audit")
    boundary = rest_policy("api.example.com", "[443]", "'*'", "**", selector="/api/**")
    outcome = check_boundary(audit, boundary).outcome
    assert outcome.verdict is not Verdict.WITHIN, outcome


def _rule(name: str, binary: str, endpoint: str) -> str:
    return f"  {name}:\n    binaries: [{{path: {binary}}}]\n    endpoints:\n      - {endpoint}\n"


JSONRPC = (
    "{host: '%s', port: 5432, path: /repos/**, protocol: json-rpc, "
    "rules: [{allow: {method: eth_call}}]}"
)


def test_an_audit_message_endpoint_beside_another_configuration_checks_its_path() -> None:
    """Was an unsound ``within_boundary`` (campaign seed 12, pair 647, shrunk): alone on
    its connection an audit JSON-RPC endpoint forwards messages on any path; in the
    boundary a second (identical) configuration from a rule matching the same binary makes
    the runtime select by path, refusing messages off ``/repos/**``."""
    alone = "version: 1\nnetwork_policies:\n" + _rule("a", "/usr/bin/curl", JSONRPC % "*-api.x.com")
    beside = alone + _rule("b", "/usr/bin/curl", JSONRPC % "**.x.com")
    outcome = check_boundary(alone, beside).outcome
    assert outcome.verdict is not Verdict.WITHIN, outcome
    other = alone + _rule("c", "/usr/bin/git", "{host: y.com, port: 1}")
    assert check_boundary(alone, other).outcome.verdict is Verdict.WITHIN


def test_tls_skip_rules_outside_the_model_are_read_not_crashed_on() -> None:
    """Was an internal error (campaign seed 12, pair 1956): a ``tls: skip`` REST endpoint
    with a glob query value; its rules are read for the forward proxy and are outside the
    model, so as a boundary nothing is sure through it."""
    skip = (
        "{host: api.x.com, port: 443, protocol: rest, enforcement: enforce, tls: skip, "
        "rules: [{allow: {method: GET, path: /a, query: {ref: 'git-*'}}}]}"
    )
    raw = "version: 1\nnetwork_policies:\n" + _rule(
        "r", "/usr/bin/curl", "{host: api.x.com, port: 443}"
    )
    boundary = "version: 1\nnetwork_policies:\n" + _rule("r", "/usr/bin/curl", skip)
    outcome = check_boundary(raw, boundary).outcome
    assert outcome.verdict is Verdict.UNSUPPORTED, outcome
    assert check_boundary(boundary, raw).outcome.verdict is Verdict.WITHIN


def test_a_witness_host_that_is_an_ip_literal_names_its_own_address() -> None:
    """Was an ``exceeds_boundary`` whose witness could not happen (campaign seed 12, pair
    1219): a hostless endpoint matches every host, and the solver named the literal host
    1.1.1.1 resolving to 8.8.8.8; an IP-literal host cannot resolve elsewhere."""
    hostless = "{ports: [443], allowed_ips: [8.8.0.0/16]}"
    literal = "{host: 1.1.1.1, ports: [443], allowed_ips: [8.8.0.0/16]}"
    candidate = "version: 1\nnetwork_policies:\n" + _rule("r", "/usr/bin/gh", literal)
    candidate += "    " + "  - " + hostless + "\n"
    boundary = candidate.replace("/usr/bin/gh", "/usr/bin/curl")
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.EXCEEDS, outcome
    cex = outcome.counterexample
    literal_host = cex.host.replace(".", "").isdigit()
    assert not literal_host or cex.host == cex.destination_ip, cex


def test_allow_encoded_slash_on_an_audit_endpoint_is_its_own_authority() -> None:
    """Was an unsound ``within_boundary`` (campaign seed 15, pair 2072, shrunk): audit
    forwards every request its parser reads, but a request with an encoded slash is
    refused before any policy unless the endpoint sets ``allow_encoded_slash``."""
    audit = "{host: api.x.com, port: 443, protocol: rest, enforcement: audit, access: full%s}"
    with_slash = "version: 1\nnetwork_policies:\n" + _rule(
        "r", "/usr/bin/curl", audit % ", allow_encoded_slash: true"
    )
    without = "version: 1\nnetwork_policies:\n" + _rule("r", "/usr/bin/curl", audit % "")
    assert check_boundary(with_slash, without).outcome.verdict is not Verdict.WITHIN
    assert check_boundary(without, with_slash).outcome.verdict is Verdict.WITHIN


def test_tls_skip_without_a_protocol_takes_over_a_plain_l4_endpoint_beside_it() -> None:
    """Was an unsound ``within_boundary`` (campaign seed 1, pair 9446, shrunk): a
    ``tls: skip`` endpoint without a protocol is still a configuration; as the first one
    on a connection it makes it an uninspected tunnel, which a fail-closed middleware
    refuses, so a plain L4 endpoint beside it in the boundary covers nothing there."""
    middleware = (
        "network_middlewares:\n  audit_log: {middleware: corp/dlp, on_error: fail_closed, "
        "endpoints: {include: ['**.example.com']}}\n"
    )
    plain = "{host: '*.*.example.com', port: 9000}"
    candidate = "version: 1\nnetwork_policies:\n" + _rule("p", "/usr/bin/pip", plain)
    boundary = candidate + "      - {host: '**.example.com', port: 9000, tls: skip}\n"
    outcome = check_boundary(candidate + middleware, boundary + middleware).outcome
    assert outcome.verdict is not Verdict.WITHIN, outcome
    # The runtime refuses this boundary anyway (find_endpoint_ambiguities: the two
    # endpoints overlap with different tls), so by default it is an error either way.
    plain = check_boundary(candidate, boundary).outcome
    assert plain.verdict is Verdict.ERROR
    assert 'tls="auto" vs "skip"' in (plain.reason or "")


def test_an_ipv6_witness_address_is_not_written_as_the_host() -> None:
    """Was a non-canonical witness (campaign seed 1, pair 9084): an IPv6 literal is not a
    canonical witness host, so the replacement host is a name."""
    hostless = "{ports: [443], allowed_ips: ['2606:4700::/32']}"
    literal = "{host: 1.1.1.1, ports: [443], allowed_ips: ['2606:4700::/32']}"
    candidate = "version: 1\nnetwork_policies:\n" + _rule("r", "/usr/bin/gh", literal)
    candidate += "      - " + hostless + "\n"
    boundary = candidate.replace("/usr/bin/gh", "/usr/bin/curl")
    outcome = check_boundary(candidate, boundary).outcome
    cex = outcome.counterexample
    assert outcome.verdict is not Verdict.EXCEEDS or ":" not in cex.host, cex


def test_a_readable_method_replaces_a_solver_made_one_only_when_the_request_replays() -> None:
    """Was a witness the runtime refuses (campaign seed 1, pairs 5837 and 10310): the
    readable method was accepted because an opaque credential grant makes the
    connection an exceed, but the request with that method is not allowed."""
    endpoint = (
        "{host: '*.*.example.com', port: 8080, protocol: rest, enforcement: enforce, "
        "rules: [{allow: {method: PURGE, path: '/v1/*'}}], websocket_credential_rewrite: true}"
    )
    candidate = "version: 1\nnetwork_policies:\n" + _rule("p", "'/**'", endpoint)
    boundary = candidate.replace("'/**'", "/usr/bin/curl")
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.EXCEEDS, outcome
    # The display step, given the solver-made method the campaign saw:
    from prover.extended.check import _named
    from prover.extended.reading import read_policy
    from prover.policy.loader import load_policy

    made = outcome.model_copy(
        update={"counterexample": outcome.counterexample.model_copy(update={"method": "P"})}
    )
    cand, bound = read_policy(load_policy(candidate)), read_policy(load_policy(boundary))
    shown = _named(made, cand, bound).counterexample
    assert shown.method == "P", shown  # POST is not allowed: the method stays as found

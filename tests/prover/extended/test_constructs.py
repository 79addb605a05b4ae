"""Each construct the extended analysis reads beyond the reference model, decided on
small pairs: the verdict, the witness (replayed on the readings' bounds) and, under
``reference_semantics``, the reference's ``unsupported``."""

from __future__ import annotations

import pytest

from prover.api import check_boundary
from prover.checks.pair import check_policies
from prover.extended.check import witness_is_real
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.results import CheckOutcome, NetworkCounterexample, Verdict
from prover.run.budget import Budget


def analysed(candidate: str, boundary: str, refusal: str) -> CheckOutcome:
    """The extended analysis of a pair the runtime refuses: ``check_boundary`` answers
    ``error`` naming ``refusal`` (find_endpoint_ambiguities or validate_sandbox_policy,
    prover.runtime.validation), so the analysis, which must not fail on such a pair
    either, is run on the loaded policies directly."""
    refused = check_boundary(candidate, boundary).outcome
    assert refused.verdict is Verdict.ERROR and refusal in (refused.reason or ""), refused
    return check_policies(load_policy(candidate), load_policy(boundary), Budget(10_000))


def policy(*endpoints: str, binary: str = "/usr/bin/curl", extra: str = "") -> str:
    body = "".join(f"      - {e}\n" for e in endpoints)
    return (
        "version: 1\n"
        f"{extra}"
        "network_policies:\n"
        "  r:\n"
        f"    binaries: [{{path: {binary}}}]\n"
        "    endpoints:\n"
        f"{body}"
    )


AUDIT = "{host: api.x.com, port: 443, protocol: rest, enforcement: audit, access: read-only}"
ENFORCED_FULL = "{host: api.x.com, port: 443, protocol: rest, enforcement: enforce, access: full}"
ENFORCED_READ = (
    "{host: api.x.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}"
)
NO_ENFORCEMENT = "{host: api.x.com, port: 443, protocol: rest, access: read-only}"
SKIP = (
    "{host: api.x.com, port: 443, protocol: rest, enforcement: enforce, tls: skip, "
    "access: read-only}"
)
L4 = "{host: api.x.com, port: 443}"
MCP_RULES = "rules: [{allow: {method: tools/call, tool: search}}]"
MCP = "{host: mcp.x.com, port: 443, protocol: mcp, " + MCP_RULES + "}"
MCP_ANY = (
    "{host: mcp.x.com, port: 443, protocol: mcp, rules: [{allow: {method: tools/call, tool: '*'}}]}"
)
MCP_L4 = "{host: mcp.x.com, port: 443}"
MCP_WILD = "{host: '*.x.com', port: 443, protocol: mcp, " + MCP_RULES + "}"
WS = (
    "{host: ws.x.com, port: 443, protocol: websocket, "
    "rules: [{allow: {method: GET, path: /socket}}]}"
)
HOSTLESS = "{port: 8080, allowed_ips: [10.0.0.0/8]}"
HOSTLESS_NARROW = "{port: 8080, allowed_ips: [10.1.0.0/16]}"
CRED = (
    "{host: api.x.com, port: 443, protocol: rest, enforcement: enforce, access: read-only, "
    "credential_binding: {provider: github}}"
)
REST_FIELDS_NO_PROTOCOL = "{host: api.x.com, port: 443, access: read-only}"
EXACT = "{host: api.x.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}"
WILD = "{host: '*.x.com', port: 443, protocol: rest, enforcement: enforce, access: read-only}"
WILD_L4 = "{host: '*.x.com', port: 443}"
NEW = "{host: evil.example, port: 9999}"
MIDDLEWARE = (
    "network_middlewares:\n"
    "  redact: {middleware: openshell/regex, config: {deny: ['secret']}, "
    "endpoints: {include: ['*.x.com']}}\n"
)

CASES = [
    # name, candidate, boundary, expected verdict
    ("audit self-narrowing", policy(AUDIT), policy(AUDIT, L4.replace("api", "other")), "within"),
    ("audit allows what enforce full allows", policy(ENFORCED_FULL), policy(AUDIT), "within"),
    (
        "audit exceeds an enforced read-only boundary",
        policy(AUDIT),
        policy(ENFORCED_READ),
        "exceeds",
    ),
    ("no enforcement is audit", policy(NO_ENFORCEMENT), policy(ENFORCED_READ), "exceeds"),
    ("audit within raw L4", policy(AUDIT), policy(L4), "within"),
    ("tls skip is raw access", policy(SKIP), policy(ENFORCED_FULL), "exceeds"),
    ("tls skip within raw L4", policy(SKIP), policy(L4), "within"),
    # An exact host beside a wildcard one on a control-plane port decides the whole
    # connection's destination rule (refused): the wildcard does not admit it alone.
    (
        "exact beside wildcard on a control-plane port",
        policy(
            "{host: '*.x.com', port: 10250, protocol: rest, enforcement: enforce, "
            "access: read-only}"
        ),
        policy(
            "{host: api.x.com, port: 10250, protocol: rest, enforcement: enforce, access: full}",
            "{host: '*.x.com', port: 10250}",
        ),
        "unsupported",
    ),
    ("any binary covers one", policy(L4), policy(L4, binary="'**'"), "within"),
    ("any binary beyond one", policy(L4, binary="'**'"), policy(L4), "exceeds"),
    # Plain HTTP through the forward proxy is still inspected under tls: skip, so the
    # boundary's skip endpoint surely allows only its rules: raw access is not within it.
    ("raw L4 beyond a tls skip boundary", policy(L4), policy(SKIP), "exceeds"),
    ("inspected reads within a tls skip boundary", policy(ENFORCED_READ), policy(SKIP), "within"),
    ("inspected writes beyond a tls skip boundary", policy(ENFORCED_FULL), policy(SKIP), "exceeds"),
    ("tls skip self-narrowing", policy(SKIP), policy(SKIP, NEW), "within"),
    ("rest fields without protocol are L4", policy(REST_FIELDS_NO_PROTOCOL), policy(L4), "within"),
    (
        "rest fields without protocol exceed REST",
        policy(REST_FIELDS_NO_PROTOCOL),
        policy(ENFORCED_FULL),
        "exceeds",
    ),
    ("identical MCP endpoint covers", policy(MCP, NEW), policy(MCP, NEW, L4), "within"),
    (
        # The wildcard refuses private destinations that the exact host may reach.
        "MCP under an identical wildcard endpoint",
        policy(MCP),
        policy(MCP_WILD),
        "exceeds",
    ),
    ("raw L4 covers MCP", policy(MCP), policy(MCP_L4), "within"),
    ("different MCP tools are not decided", policy(MCP_ANY), policy(MCP), "unsupported"),
    ("MCP to a destination the boundary cannot reach", policy(MCP), policy(L4), "exceeds"),
    ("identical websocket covers", policy(WS), policy(WS, L4), "within"),
    (
        "websocket beyond REST",
        policy(WS),
        policy(ENFORCED_FULL.replace("api.x.com", "ws.x.com")),
        "unsupported",
    ),
    ("hostless within a wider hostless", policy(HOSTLESS_NARROW), policy(HOSTLESS), "within"),
    ("hostless beyond a narrower hostless", policy(HOSTLESS), policy(HOSTLESS_NARROW), "exceeds"),
    ("credentials covered by the identical binding", policy(CRED), policy(CRED, NEW), "within"),
    ("credentials not covered by raw access", policy(CRED), policy(L4), "unsupported"),
    # The selected configuration's credential fields apply: a sibling endpoint without
    # them on the same connection may be chosen, so the boundary does not surely inject.
    (
        "exact beside wildcard, self narrowing",
        policy(EXACT, WILD),
        policy(EXACT, WILD, NEW),
        "within",
    ),
    (
        "L4 beside REST: the boundary's L4 grants nothing there",
        policy(L4),
        policy(L4, ENFORCED_READ),
        "exceeds",
    ),
    (
        "identical middlewares",
        policy(L4, extra=MIDDLEWARE),
        policy(L4, NEW, extra=MIDDLEWARE),
        "within",
    ),
    # A candidate's own middleware is an authority (it may add headers such as an API
    # key and replace bodies: openshell-supervisor-middleware headers.rs); a boundary's
    # own one restricts the boundary in ways the candidate is not.
    ("candidate-only middleware", policy(L4, extra=MIDDLEWARE), policy(L4), "unsupported"),
    ("boundary-only middleware", policy(L4), policy(L4, extra=MIDDLEWARE), "unsupported"),
    (
        # It only restricts the boundary: an exceed stands, and hosts it does not select
        # are decided as usual.
        "boundary-only middleware, a new host",
        policy(L4, NEW),
        policy(L4, extra=MIDDLEWARE),
        "exceeds",
    ),
    (
        "boundary-only middleware elsewhere",
        policy("{host: b.y.com, port: 443}"),
        policy("{host: b.y.com, port: 443}", L4, extra=MIDDLEWARE),
        "within",
    ),
    (
        # The middleware selects *.x.com and may refuse anything there: no sure witness.
        "candidate-only middleware over the new host",
        policy(L4, "{host: new.x.com, port: 443}", extra=MIDDLEWARE),
        policy(L4),
        "unsupported",
    ),
    (
        "candidate-only middleware elsewhere",
        policy(L4, NEW, extra=MIDDLEWARE),
        policy(L4),
        "exceeds",
    ),
    (
        "a new host is an exceed whatever else",
        policy(MCP, WS, AUDIT, NEW),
        policy(MCP, WS, AUDIT),
        "exceeds",
    ),
]


@pytest.mark.parametrize(
    ("name", "candidate", "boundary", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_construct(name: str, candidate: str, boundary: str, expected: str) -> None:
    check = check_boundary(candidate, boundary)
    outcome = check.outcome
    assert outcome.verdict.value.startswith(expected), (outcome.verdict, outcome.reason)
    assert check.receipt.semantics == "extended"
    if outcome.verdict is Verdict.EXCEEDS:
        assert isinstance(outcome.counterexample, NetworkCounterexample)
        cand, bound = read_policy(load_policy(candidate)), read_policy(load_policy(boundary))
        assert witness_is_real(cand, bound, outcome.counterexample)
    if outcome.verdict is Verdict.UNSUPPORTED:
        assert outcome.reason


@pytest.mark.parametrize(
    ("name", "candidate", "boundary", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_every_policy_is_within_itself(
    name: str, candidate: str, boundary: str, expected: str
) -> None:
    for text in (candidate, boundary):
        assert check_boundary(text, text).outcome.verdict is Verdict.WITHIN


def test_the_reference_semantics_still_refuse_these_constructs() -> None:
    for construct in (AUDIT, SKIP, MCP, WS, HOSTLESS, CRED, REST_FIELDS_NO_PROTOCOL):
        text = policy(construct)
        outcome = check_boundary(text, text, reference_semantics=True).outcome
        assert outcome.verdict is Verdict.UNSUPPORTED, construct
    both = policy(EXACT, WILD)
    assert (
        check_boundary(both, both, reference_semantics=True).outcome.verdict is Verdict.UNSUPPORTED
    )


def test_the_receipt_lists_what_was_read_beyond_the_reference() -> None:
    check = check_boundary(policy(AUDIT), policy(L4, NEW))
    assert check.outcome.verdict is Verdict.WITHIN
    assert any("audit" in reading for reading in check.receipt.readings)


def test_credentials_beside_a_sibling_without_them() -> None:
    candidate, boundary = policy(CRED), policy(CRED, ENFORCED_READ)
    conflict = 'credential_binding.provider="github" vs ""'
    assert analysed(candidate, boundary, conflict).verdict is Verdict.UNSUPPORTED


def test_shared_endpoints_that_nothing_else_touches_are_left_out() -> None:
    """A narrowing elsewhere decides although the shared part alone depends on the
    runtime's selection (an audit and an enforced endpoint on one connection)."""
    audit_beside_enforced = (AUDIT, ENFORCED_READ.replace("read-only", "full"))
    narrowed = policy(*audit_beside_enforced, "{host: b.y.com, port: 443}")
    wider = policy(*audit_beside_enforced, "{host: b.y.com, port: 443}", NEW)
    conflict = 'enforcement="audit" vs "enforce"'
    assert analysed(narrowed, wider, conflict).verdict is Verdict.WITHIN
    # The shared pair is not left out when another endpoint touches its connection.
    touched = policy(*audit_beside_enforced, L4)
    assert analysed(touched, wider, conflict).verdict is not Verdict.WITHIN


def test_a_shared_endpoint_outside_the_model_is_left_out_whether_read_before_or_not() -> None:
    """An endpoint both policies share is decided whatever its shape, even one the
    reading cannot represent (access beside rules); the second check reads the kept
    policies' endpoint readings (prover.policy.facts), which must not fail on it."""
    both = (
        "{host: a.x.com, port: 443, protocol: rest, enforcement: enforce, access: full, "
        "rules: [{allow: {method: GET, path: /x}}]}"
    )
    narrowed = policy(both, "{host: b.y.com, port: 443}")
    wider = policy(both, "{host: b.y.com, port: 443}", NEW)
    refusal = "rules and access are mutually exclusive"
    for _ in range(2):
        assert analysed(narrowed, wider, refusal).verdict is Verdict.WITHIN
    assert analysed(wider, narrowed, refusal).verdict is Verdict.EXCEEDS


def test_a_shape_problem_names_the_endpoint_by_its_index_as_written() -> None:
    """An endpoint both policies share is left out of the shape check; the problem of
    the one after it still names its own index (it used to name its position among
    those left in)."""
    bad = "{host: b.x.com, port: 443, path: '/a/../b'}"
    shared = "{host: a.x.com, port: 443}"
    outcome = check_boundary(policy(shared, bad), policy(shared, L4)).outcome
    assert outcome.verdict is Verdict.UNSUPPORTED
    assert "non-canonical endpoint path (endpoint 1)" in (outcome.reason or "")


IPS_A = (
    "{host: api.x.com, port: 443, protocol: rest, enforcement: enforce, "
    "allowed_ips: [10.0.1.0/24], rules: [{allow: {method: GET, path: /a}}%s]}"
)
IPS_B = (
    "{host: '*.x.com', port: 443, protocol: rest, enforcement: enforce, "
    "allowed_ips: [10.0.2.0/24], access: read-only}"
)


def test_the_same_pick_on_both_sides_keeps_overlapping_allowed_ips_grants() -> None:
    """Two overlapping endpoints with different allowed_ips: which list applies is the
    runtime's pick, the same in both policies when their configurations agree."""
    wider = policy(IPS_A % ", {allow: {method: POST, path: /b}}", IPS_B)
    narrower = policy(IPS_A % "", IPS_B)
    conflict = "with conflicting metadata: allowed_ips="
    assert analysed(narrower, wider, conflict).verdict is Verdict.WITHIN
    # (No single address is surely allowed under every pick: not an exceed either.)
    assert analysed(wider, narrower, conflict).verdict is Verdict.UNSUPPORTED
    # Another configuration in the candidate (its own list) may be picked differently.
    moved = policy(IPS_A.replace("10.0.1.0/24", "10.0.3.0/24") % "", IPS_B)
    assert analysed(moved, wider, conflict).verdict is not Verdict.WITHIN


def test_the_legacy_inference_section_is_an_error_as_in_the_mainline_parser() -> None:
    both = "version: 1\ninference: {allowed_routes: [local, cloud]}\n"
    outcome = check_boundary(both, both).outcome
    assert outcome.verdict is Verdict.ERROR
    assert "unknown field 'inference'" in (outcome.reason or "")


def test_an_exceed_elsewhere_is_reported_whatever_the_working_directory() -> None:
    """The image's working directory decides the filesystem domain only: a new host is
    an exceed whatever it is (the reference semantics stop at the workdir)."""
    files = "filesystem_policy: {include_workdir: true, read_write: [/sandbox/work]}\n"
    bound_files = "filesystem_policy: {include_workdir: true, read_write: [/tmp]}\n"
    candidate = policy(L4, NEW, extra=files)
    boundary = policy(L4, extra=bound_files)
    outcome = check_boundary(candidate, boundary).outcome
    assert outcome.verdict is Verdict.EXCEEDS, outcome
    assert outcome.counterexample.domain == "network"
    reference = check_boundary(candidate, boundary, reference_semantics=True).outcome
    assert reference.reason_code is not None and reference.reason_code.value == "unresolved_workdir"
    # Without the new host the answer does depend on the working directory.
    same_network = check_boundary(policy(L4, extra=files), boundary).outcome
    assert same_network.reason_code is not None
    assert same_network.reason_code.value == "unresolved_workdir"

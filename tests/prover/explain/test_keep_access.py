"""Fixes that keep access: narrow before deleting, name who is granted, and the closest
boundary entry on every dimension first."""

from __future__ import annotations

from prover.explain import explain
from prover.explain.compact import compact, render_compact_text
from prover.policy.reader import read_policy_data

BOUNDARY = """\
version: 1
network_policies:
  nvidia:
    endpoints: [{ host: integrate.api.nvidia.com, port: 443 }]
    binaries: [{ path: /usr/bin/curl }, { path: /bin/bash }, { path: /usr/local/bin/opencode }]
  other:
    endpoints: [{ host: other.example.com, port: 443 }]
    binaries: [{ path: /usr/bin/node }]
"""

#: The boundary's nvidia rule with one more binary: only that binary exceeds.
EXTRA_BINARY = """\
version: 1
network_policies:
  nvidia:
    endpoints: [{ host: integrate.api.nvidia.com, port: 443 }]
    binaries:
      - { path: /usr/bin/curl }
      - { path: /bin/bash }
      - { path: /usr/local/bin/opencode }
      - { path: /usr/bin/node }
"""


def test_only_the_offending_binary_is_dropped_and_the_rule_keeps_the_others() -> None:
    explanation = explain(EXTRA_BINARY, BOUNDARY)

    assert explanation.fix_verified
    (violation,) = explanation.violations
    # The witness names the granting binary, in the mode that checks binaries.
    assert violation.counterexample["binary"] == "/usr/bin/node"
    assert violation.counterexample["binary_identity_required"] is True
    assert [g.binary for g in violation.granted_by] == ["/usr/bin/node"]
    assert violation.fix_kind == "narrow"
    assert [(op.op, op.path) for op in violation.fix] == [
        ("remove", "network_policies.nvidia.binaries[3]")
    ]
    fixed = explanation.fixed_candidate or ""
    for kept in ("/usr/bin/curl", "/bin/bash", "/usr/local/bin/opencode"):
        assert kept in fixed
    assert "/usr/bin/node" not in fixed
    kept_units = explanation.grants_kept
    assert kept_units is not None and kept_units.with_rule_deleted is not None
    assert (kept_units.before, kept_units.with_fix, kept_units.with_rule_deleted) == (4, 3, 0)


def test_the_closest_entry_differs_only_by_binary_not_by_host() -> None:
    explanation = explain(EXTRA_BINARY, BOUNDARY)

    closest = explanation.violations[0].closest_boundary_rules[0]
    assert closest.path == "network_policies.nvidia.endpoints[0]"
    assert [m.dimension for m in closest.fails_on] == ["binary"]


def test_no_placeholder_or_any_process_for_a_rule_scoped_to_binaries() -> None:
    short = compact(explain(EXTRA_BINARY, BOUNDARY))
    text = render_compact_text(short)

    assert "binary=-" not in text and "Any process" not in text
    assert short.violations[0].what.startswith("/usr/bin/node: L4 connect")
    assert short.violations[0].closest == "network_policies.nvidia.endpoints[0] (fails on binary)"


def test_a_writable_path_is_made_read_only_rather_than_deleted() -> None:
    boundary = "version: 1\nfilesystem_policy:\n  read_only: [/data]\n"
    candidate = "version: 1\nfilesystem_policy:\n  read_write: [/data]\n"

    explanation = explain(candidate, boundary)

    assert explanation.fix_verified
    assert "/data" in (explanation.fixed_candidate or "")
    kept = explanation.grants_kept
    assert kept is not None and kept.with_rule_deleted is not None
    assert kept.with_fix > kept.with_rule_deleted


def test_grants_are_located_in_hostless_and_preset_endpoints_as_written() -> None:
    boundary = (
        "version: 1\nnetwork_policies:\n  n:\n"
        "    endpoints: [{ host: api.example.com, port: 443 }]\n"
        "    binaries: [{ path: /usr/bin/curl }]\n"
    )
    candidate = (
        "version: 1\nnetwork_policies:\n  n:\n"
        "    endpoints:\n"
        "      - { host: api.example.com, port: 443 }\n"
        "      - { ports: [8443], allowed_ips: [8.8.8.0/24] }\n"
        "    binaries: [{ path: /usr/bin/curl }]\n"
    )

    explanation = explain(candidate, boundary)

    assert explanation.violations, explanation.enumeration.stopped_because
    assert "internal error" not in (explanation.enumeration.stopped_because or "")
    assert explanation.violations[0].granted_by[0].path == "network_policies.n.endpoints[1]"


def test_later_violations_name_entries_of_the_original_candidate() -> None:
    boundary = (
        "version: 1\nnetwork_policies:\n  n:\n"
        "    endpoints: [{ host: api.example.com, port: 443 }]\n"
        "    binaries: [{ path: /usr/bin/curl }]\n"
    )
    candidate = (
        "version: 1\nnetwork_policies:\n  n:\n"
        "    endpoints:\n"
        "      - { host: one.example.org, port: 443 }\n"
        "      - { host: api.example.com, port: 443 }\n"
        "      - { host: two.example.org, port: 443 }\n"
        "    binaries: [{ path: /usr/bin/curl }]\n"
    )

    explanation = explain(candidate, boundary)

    assert explanation.fix_verified
    paths = sorted(v.granted_by[0].path for v in explanation.violations)
    assert paths == ["network_policies.n.endpoints[0].host", "network_policies.n.endpoints[2].host"]
    removed = sorted(op.path for v in explanation.violations for op in v.fix)
    assert removed == ["network_policies.n.endpoints[0]", "network_policies.n.endpoints[2]"]
    # The whole fix still applies in order, as JSON Patch does.
    data = read_policy_data(candidate)
    for op in explanation.fix:
        assert op.op == "remove"
        index = int(op.path.rsplit("[", 1)[1].rstrip("]"))
        del data["network_policies"]["n"]["endpoints"][index]
    assert data == read_policy_data(explanation.fixed_candidate or "")


MCP_BOUNDARY = """\
version: 1
network_policies:
  mcp:
    endpoints:
      - host: mcp.example.com
        port: 443
        protocol: mcp
        mcp: { max_body_bytes: 131072, strict_tool_names: false }
        rules:
          - allow: { method: tools/call, tool: search_web }
    binaries: [{ path: /usr/bin/curl }]
"""


def test_a_binary_reaching_an_opaque_endpoint_is_dropped_not_the_rule() -> None:
    candidate = MCP_BOUNDARY.replace(
        "binaries: [{ path: /usr/bin/curl }]",
        "binaries: [{ path: /usr/bin/curl }, { path: /usr/bin/node }]",
    )

    explanation = explain(candidate, MCP_BOUNDARY)

    assert explanation.fix_verified
    (violation,) = explanation.violations
    assert [g.path for g in violation.granted_by] == ["network_policies.mcp"]
    assert [(op.op, op.path) for op in violation.fix] == [
        ("remove", "network_policies.mcp.binaries[1]")
    ]
    assert read_policy_data(explanation.fixed_candidate or "") == read_policy_data(MCP_BOUNDARY)


def test_a_tls_skip_endpoint_is_inspected_rather_than_deleted() -> None:
    """``tls: skip`` tunnels raw traffic; without it the runtime inspects the endpoint by
    its rules, which the boundary allows: drop the field, keep the rule."""
    rest = (
        "{host: api.anthropic.com, port: 443, protocol: rest, enforcement: enforce%s, "
        "rules: [{allow: {method: POST, path: /v1/messages}}]}"
    )
    head = "version: 1\nnetwork_policies:\n  a:\n    binaries: [{path: /usr/bin/claude}]\n"
    boundary = head + "    endpoints: [" + rest % "" + "]\n"
    candidate = head + "    endpoints: [" + rest % ", tls: skip" + "]\n"
    explanation = explain(candidate, boundary)
    assert explanation.fix_verified
    (violation,) = explanation.violations
    assert violation.fix_kind == "narrow"
    assert [(op.op, op.path) for op in violation.fix] == [
        ("remove", "network_policies.a.endpoints[0].tls")
    ]
    assert "/v1/messages" in (explanation.fixed_candidate or "")


def test_entries_an_earlier_fix_split_are_named_by_their_original_path() -> None:
    """The first fix splits ``**.example.com`` into the boundary's two wildcards; the
    later violations are granted by those copies, and ``granted_by`` names the entry of
    the original candidate they were made from (not indices that exist only after the
    split)."""
    boundary = (
        "version: 1\nnetwork_policies:\n  n:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints:\n"
        '      - {host: "*.a.example.com", port: 443, protocol: rest, enforcement: enforce,'
        ' rules: [{allow: {method: GET, path: "/**"}}]}\n'
        '      - {host: "*.b.example.com", port: 443, protocol: rest, enforcement: enforce,'
        ' rules: [{allow: {method: GET, path: "/**"}}]}\n'
    )
    candidate = (
        "version: 1\nnetwork_policies:\n  n:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints:\n"
        '      - {host: "**.example.com", port: 443, protocol: rest, enforcement: enforce,'
        ' rules: [{allow: {method: GET, path: "/**"}}, {allow: {method: DELETE, path: "/**"}}]}\n'
    )
    explanation = explain(candidate, boundary)

    assert explanation.fix_verified
    first, *later = explanation.violations
    assert first.fix_description.startswith("split network_policies.n.endpoints[0]")
    assert len(later) == 2
    original = read_policy_data(candidate)["network_policies"]["n"]["endpoints"][0]
    for violation in later:
        (grant,) = violation.granted_by
        assert grant.path == "network_policies.n.endpoints[0]"
        assert (grant.endpoint_index, grant.allow_rule_index) == (0, None)
        assert grant.value == original
        assert "an earlier fix narrowed" in grant.summary
    assert explanation.grants_kept is not None
    assert explanation.grants_kept.with_fix == 2  # GET on both boundary wildcards


GITHUB_BOUNDARY = (
    "version: 1\nnetwork_policies:\n  gh:\n    binaries: [{path: /usr/bin/curl}]\n"
    "    endpoints:\n"
    "      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, rules: ["
    '{allow: {method: GET, path: "/repos/**"}}, '
    '{allow: {method: POST, path: "/repos/x/issues/*/comments"}}]}\n'
)


def test_an_extra_binary_and_a_broad_method_are_fixed_without_deleting_allowed_rules() -> None:
    """Found by an agent: the rule has an extra binary (git) and a ``*`` method. Dropping
    git and deleting the legitimate GET rule each lose grant units, so ranking by units
    alone deleted the GET rule; ranking first by the units the boundary grants keeps it."""
    candidate = (
        "version: 1\nnetwork_policies:\n  gh:\n"
        "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/git}]\n"
        "    endpoints:\n"
        "      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, rules: ["
        '{allow: {method: GET, path: "/repos/x/**"}}, '
        '{allow: {method: "*", path: "/repos/x/issues/**"}}]}\n'
    )
    explanation = explain(candidate, GITHUB_BOUNDARY)

    assert explanation.fix_verified
    fixed = read_policy_data(explanation.fixed_candidate or "")["network_policies"]["gh"]
    assert fixed["binaries"] == [{"path": "/usr/bin/curl"}]
    rules = [r["allow"] for r in fixed["endpoints"][0]["rules"]]
    assert {"method": "GET", "path": "/repos/x/**"} in rules
    assert {"method": "POST", "path": "/repos/x/issues/*/comments"} in rules
    assert explanation.grants_kept is not None
    assert explanation.grants_kept.with_fix == 3


def test_an_extra_port_is_narrowed_rather_than_a_binary_dropped() -> None:
    boundary = (
        "version: 1\nnetwork_policies:\n  n:\n"
        "    binaries: [{path: /usr/bin/curl}, {path: /bin/bash}]\n"
        "    endpoints: [{host: api.example.com, port: 443}]\n"
    )
    candidate = boundary.replace("port: 443", "ports: [443, 8443]")
    explanation = explain(candidate, boundary)

    assert explanation.fix_verified
    fixed = read_policy_data(explanation.fixed_candidate or "")["network_policies"]["n"]
    assert fixed["binaries"] == [{"path": "/usr/bin/curl"}, {"path": "/bin/bash"}]
    assert fixed["endpoints"] == [{"host": "api.example.com", "ports": [443]}]
    assert len(explanation.violations) == 1


def test_the_first_releases_filesystem_section_name_is_an_error() -> None:
    """Mainline's first releases named the section ``filesystem``; mainline's parser
    (2f7fb65) refuses it as an unknown field, so explain reports the error."""
    boundary = "version: 1\nfilesystem:\n  include_workdir: false\n  read_only: [/usr]\n"
    candidate = "version: 1\nfilesystem_policy:\n  include_workdir: false\n  read_only: [/etc]\n"
    explanation = explain(candidate, boundary)
    assert explanation.result.result == "error"
    assert "unknown field 'filesystem'" in (explanation.result.reason or "")


def test_a_wildcard_narrows_to_the_boundary_host_inside_it_whatever_its_rank() -> None:
    """Found by an agent: the boundary host inside ``*.visualstudio.com`` was its fourth
    endpoint, and only the three nearest (all failing on host alike) were tried."""
    boundary = (
        "version: 1\nnetwork_policies:\n  vscode:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints:\n"
        "      - {host: update.code.visualstudio.com, port: 443}\n"
        "      - {host: '*.vo.msecnd.net', port: 443}\n"
        "      - {host: vscode.download.prss.microsoft.com, port: 443}\n"
        "      - {host: marketplace.visualstudio.com, port: 443}\n"
    )
    candidate = (
        "version: 1\nnetwork_policies:\n  v:\n    binaries: [{path: /usr/bin/curl}]\n"
        "    endpoints: [{host: '*.visualstudio.com', port: 443}]\n"
    )
    explanation = explain(candidate, boundary)

    assert explanation.fix_verified
    (violation,) = explanation.violations
    assert violation.fix_kind == "narrow"
    fixed = read_policy_data(explanation.fixed_candidate or "")["network_policies"]["v"]
    assert fixed["endpoints"] == [{"host": "marketplace.visualstudio.com", "port": 443}]

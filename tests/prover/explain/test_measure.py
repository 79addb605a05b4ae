"""Grant units, the measure that compares a fix with deleting outright."""

from __future__ import annotations

import pytest

from prover.explain.measure import grant_units
from prover.policy.loader import load_policy
from prover.policy.normalize import normalize

REST = "protocol: rest, enforcement: enforce"


def _units(text: str) -> int:
    return grant_units(normalize(load_policy(text)))


def _network(endpoint: str, binaries: str = "[{ path: /usr/bin/curl }]") -> str:
    return (
        "version: 1\nfilesystem_policy: {}\nnetwork_policies:\n  n:\n"
        f"    endpoints: [{endpoint}]\n    binaries: {binaries}\n"
    )


@pytest.mark.parametrize(
    ("text", "units"),
    [
        pytest.param(_network("{ host: a.example.com, port: 443 }"), 1, id="l4-endpoint"),
        pytest.param(_network("{ host: a.example.com, ports: [443, 80] }"), 2, id="per-port"),
        pytest.param(
            _network("{ host: a.example.com, port: 443 }", "[{ path: /a }, { path: /b }]"),
            2,
            id="per-binary",
        ),
        pytest.param(
            _network("{ host: a.example.com, port: 443 }", "[]"), 1, id="no-binaries-count-once"
        ),
        pytest.param(
            _network(f"{{ host: a.example.com, port: 443, {REST}, access: read-only }}"),
            1,
            id="preset-is-one-entry",
        ),
        pytest.param(
            _network(
                f"{{ host: a.example.com, port: 443, {REST}, rules: "
                "[{ allow: { method: GET } }, { allow: { method: POST, path: /x } }] }"
            ),
            2,
            id="per-allow-rule",
        ),
        pytest.param(
            _network(
                f"{{ host: a.example.com, port: 443, {REST}, access: full,"
                " deny_rules: [{ method: '*', path: /** }] }"
            ),
            0,
            id="fully-denied-entries-count-zero",
        ),
        pytest.param(
            "version: 1\nfilesystem_policy: {read_only: [/a, /b], read_write: [/c]}\n",
            4,
            id="filesystem-read-one-write-two",
        ),
        pytest.param(
            "version: 1\nprocess: {run_as_user: sandbox}\n", 0, id="settings-are-not-grants"
        ),
    ],
)
def test_grant_units(text: str, units: int) -> None:
    assert _units(text) == units


def test_inside_units_count_what_one_boundary_entry_grants() -> None:
    from prover.explain.measure import inside_units

    boundary = normalize(
        load_policy(
            "version: 1\nfilesystem_policy: {read_only: [/usr], read_write: [/tmp]}\n"
            "network_policies:\n  gh:\n    binaries: [{path: /usr/bin/curl}]\n"
            "    endpoints: [{host: api.github.com, port: 443, protocol: rest, "
            "enforcement: enforce, rules: [{allow: {method: GET, path: /repos/**}}]}]\n"
        )
    )
    candidate = normalize(
        load_policy(
            "version: 1\nfilesystem_policy: {read_only: [/usr, /etc], read_write: [/tmp, /usr]}\n"
            "network_policies:\n  gh:\n"
            "    binaries: [{path: /usr/bin/curl}, {path: /usr/bin/git}]\n"
            "    endpoints: [{host: api.github.com, ports: [443, 8443], protocol: rest, "
            "enforcement: enforce, rules: [{allow: {method: GET, path: /repos/x/**}}, "
            "{allow: {method: POST, path: /repos/x/**}}]}]\n"
        )
    )
    cache: dict = {}
    # Network: curl x port 443 x GET only (git, 8443 and POST are outside): 1.
    # Files: /usr read (1), /etc none, /tmp read+write (2), /usr read but not write (1).
    assert inside_units(candidate, boundary, cache) == 1 + 1 + 2 + 1
    assert cache  # each unit decided once
    assert inside_units(boundary, boundary, cache) == 1 + 1 + 2


def test_inside_units_answers_to_the_explanations_deadline() -> None:
    """Found by probing: 300 wildcard rules against 299 took 5 s of a 1 s explanation
    (every unit against every boundary endpoint, no checkpoint)."""
    from prover.explain.document import reading_under
    from prover.explain.measure import inside_units
    from prover.run.budget import BudgetExhausted

    def rules(n: int) -> str:
        return "version: 1\nnetwork_policies:\n" + "".join(
            f"  r{i}:\n    endpoints: [{{host: '*.s{i}.example.com', port: 443}}]\n"
            "    binaries: [{path: /usr/bin/curl}]\n"
            for i in range(n)
        )

    candidate, boundary = normalize(load_policy(rules(40))), normalize(load_policy(rules(39)))
    ticks: list[int] = []

    def checkpoint() -> None:
        ticks.append(1)
        if len(ticks) == 5:
            raise BudgetExhausted(cancelled=False)

    with reading_under(checkpoint), pytest.raises(BudgetExhausted):
        inside_units(candidate, boundary, {})
    assert len(ticks) == 5
    # Without a deadline it counts the 39 units the boundary grants (one per rule).
    assert inside_units(candidate, boundary, {}) == 39

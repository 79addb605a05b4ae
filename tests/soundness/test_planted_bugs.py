"""A deliberately planted bug of each kind is caught by the oracle's judge.

A small fake prover answers from the oracle's own model: ``error`` for a policy the
runtime refuses, ``within_boundary`` when no action exceeds, else
``exceeds_boundary`` with the excess action as its witness. Unpatched, the judge accepts
every one of its verdicts (the control). Each test plants one bug into the fake
prover's model (by monkeypatching it only while the fake prover runs) and asserts the
judge, reading the unpatched runtime model, flags the verdict it then gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.soundness.sandbox_oracle import Image, build_sandbox
from tests.soundness.sandbox_oracle import filesystem as fs_mod
from tests.soundness.sandbox_oracle import identity as id_mod
from tests.soundness.sandbox_oracle import network as net_mod
from tests.soundness.sandbox_oracle import sandbox as sandbox_mod
from tests.soundness.sandbox_oracle.filesystem import Landlock
from tests.soundness.sandbox_oracle.judge import first_excess, judge
from tests.soundness.sandbox_oracle.policy import Endpoint

IMAGE = Image(
    files=frozenset({"/usr/bin/curl", "/usr/bin/python3.11", "/etc/passwd"}),
    dirs=frozenset({"/usr/lib", "/lib", "/etc", "/tmp", "/sandbox", "/proc", "/var/log"}),
    symlinks={"/bin": "usr/bin", "/usr/bin/py": "python3.11"},
    passwd={"root": (0, 0), "sandbox": (1000, 100)},
    groups={"root": 0, "users": 100, "sandbox": 1000},
    user="sandbox",
    workdir="/sandbox",
)


def fake_prover(candidate: str, boundary: str, image: Image) -> dict[str, Any]:
    if build_sandbox(candidate, image).refused or build_sandbox(boundary, image).refused:
        return {"verdict": "error"}
    excess = first_excess(candidate, boundary, image)
    if excess is None:
        return {"verdict": "within_boundary"}
    if excess.witness is None:
        return {"verdict": "unsupported"}
    return {"verdict": "exceeds_boundary", "counterexample": excess.witness}


def endpoint(extra: str, binary: str = "/usr/bin/curl") -> str:
    return (
        "version: 1\nfilesystem_policy: {read_only: [/usr]}\nnetwork_policies:\n  p:\n"
        f"    binaries: [{{path: {binary}}}]\n"
        f"    endpoints:\n      - {{host: api.example.com, port: 443{extra}}}\n"
    )


REST = ", protocol: rest, enforcement: enforce"


def _no_enrichment(m: pytest.MonkeyPatch) -> None:
    m.setattr(fs_mod, "baseline_paths", lambda proxy, image: ([], []))


def _landlock_always_on(m: pytest.MonkeyPatch) -> None:
    real = sandbox_mod.landlock_for

    def buggy(*args: Any, **kwargs: Any) -> Landlock:
        found = real(*args, **kwargs)
        return Landlock((), "deny-all") if found.rules is None else found

    m.setattr(sandbox_mod, "landlock_for", buggy)


def _binaries_fully_resolved(m: pytest.MonkeyPatch) -> None:
    def resolve(path: str, image: Image) -> str | None:
        real = image.resolve(path)
        return real if real not in (None, path) else None

    m.setattr(net_mod, "resolve_binary_in_container", resolve)


def _group_named_like_user(m: pytest.MonkeyPatch) -> None:
    real = id_mod.process_identity

    def buggy(policy: Any, image: Image) -> tuple[int, int]:
        uid, gid = real(policy, image)
        group = (policy.process or ("", ""))[1]
        if not group and image.user in image.groups:
            gid = image.groups[image.user]
        return uid, gid

    m.setattr(sandbox_mod, "process_identity", buggy)


def _no_validation(m: pytest.MonkeyPatch) -> None:
    m.setattr(sandbox_mod, "validation_violations", lambda *args: [])


def _deny_without_path_fires(m: pytest.MonkeyPatch) -> None:
    def denies(ep: Endpoint, req: net_mod.Request) -> bool:
        return any(net_mod.method_matches(req.method, d.method) for d in ep.deny_rules)

    m.setattr(net_mod, "_denies_http", denies)


def _audit_read_as_enforce(m: pytest.MonkeyPatch) -> None:
    real = net_mod.build_data

    def buggy(policy: Any, image: Image) -> list[net_mod.DataRule]:
        rules = real(policy, image)
        return [
            net_mod.DataRule(
                r.key,
                tuple(Endpoint(**{**e.__dict__, "enforcement": "enforce"}) for e in r.endpoints),
                r.binaries,
            )
            for r in rules
        ]

    m.setattr(sandbox_mod, "build_data", buggy)


PLANTED: list[tuple[str, Callable[[pytest.MonkeyPatch], None], str, str, str, str]] = [
    # (bug, plant, candidate, boundary, expected kind, expected domain)
    (
        "enrichment ignored",
        _no_enrichment,
        "version: 1\nfilesystem_policy: {read_only: [/usr]}\nnetwork_policies: {p0: {}}\n",
        "version: 1\nfilesystem_policy: {read_only: [/usr]}\n",
        "unsound",
        "filesystem",
    ),
    (
        "Landlock off ignored",
        _landlock_always_on,
        "version: 1\nfilesystem_policy: {}\n",
        "version: 1\nfilesystem_policy: {read_only: [/usr]}\n",
        "unsound",
        "filesystem",
    ),
    (
        "symlinked directory expanded in a binary",
        _binaries_fully_resolved,
        endpoint(""),
        endpoint("", binary="/bin/curl"),
        "unsound",
        "network",
    ),
    (
        "group named like the user instead of the primary gid",
        _group_named_like_user,
        "version: 1\n",
        "version: 1\nprocess: {run_as_group: '1000'}\n",
        "unsound",
        "identity",
    ),
    (
        "validation ignored",
        _no_validation,
        "version: 1\nprocess: {run_as_user: root}\n",
        "version: 1\nprocess: {run_as_user: root}\n",
        "unsound",
        "validation",
    ),
    (
        "a deny rule without path fires",
        _deny_without_path_fires,
        endpoint(REST + ", access: full"),
        endpoint(REST + ", access: full, deny_rules: [{method: POST}]"),
        "false_exceed",
        "network",
    ),
    (
        "audit read as enforce",
        _audit_read_as_enforce,
        endpoint(
            ", protocol: rest, enforcement: audit, rules: [{allow: {method: GET, path: '/**'}}]"
        ),
        endpoint(REST + ", rules: [{allow: {method: GET, path: '/**'}}]"),
        "unsound",
        "network",
    ),
]


@pytest.mark.parametrize("row", PLANTED, ids=[row[0] for row in PLANTED])
def test_the_unpatched_fake_prover_is_judged_sound(row: tuple) -> None:
    _, _, candidate, boundary, _, _ = row
    assert judge(candidate, boundary, IMAGE, fake_prover(candidate, boundary, IMAGE)) == []


@pytest.mark.parametrize("row", PLANTED, ids=[row[0] for row in PLANTED])
def test_a_planted_bug_is_caught(row: tuple) -> None:
    _, plant, candidate, boundary, kind, domain = row
    with pytest.MonkeyPatch.context() as m:
        plant(m)
        outcome = fake_prover(candidate, boundary, IMAGE)
    findings = judge(candidate, boundary, IMAGE, outcome)
    assert [(f.kind, f.domain) for f in findings] == [(kind, domain)], (outcome, findings)


def test_a_witness_for_a_symlinked_binary_is_caught() -> None:
    # The planted bug on the exceeds side: a witness naming the link, not the target.
    candidate = endpoint("", binary="/usr/bin/py")
    boundary = endpoint("").replace("api.example.com", "other.example.com")
    outcome = fake_prover(candidate, boundary, IMAGE)
    assert outcome["counterexample"]["binary"] == "/usr/bin/python3.11"
    outcome["counterexample"]["binary"] = "/usr/bin/py"
    outcome["counterexample"]["ancestor_binary"] = None
    findings = judge(candidate, boundary, IMAGE, outcome)
    assert [f.domain for f in findings] == ["network:symlink-exe"]

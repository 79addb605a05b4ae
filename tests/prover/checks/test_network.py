"""One identity mode of the network check: which stage decides, and that a partial
structural cover leaves the right work to the probes and Z3."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import prover.checks.network as network
from prover.checks.network import check_network_mode
from prover.encode.solver import NetworkModeResult, solve_network_mode
from prover.policy.model import Policy
from prover.results import Verdict
from prover.run.budget import Budget
from tests.prover.encode.helpers import http, policy, rest, rule

CURL = "/usr/bin/curl"
IPS = ["8.8.0.0/16"]


def _glob_heavy(size: int) -> tuple[Policy, Policy]:
    cand, bound = [], []
    for i in range(size):
        host = f"svc{i}.example.com"
        c = rest(f"*.{host}", allowed_ips=IPS, allow=[http("GET", "/data/*/x/**")])
        b = rest(
            f"**.{host}",
            allowed_ips=IPS,
            allow=[http("GET", "/data/**"), http("POST", "/data/*/items")],
        )
        cand.append(rule(f"r{i}", [c], ["/usr/bin/*"]))
        bound.append(rule(f"r{i}", [b], ["/usr/bin/*"]))
    return policy(*cand), policy(*bound)


@pytest.mark.parametrize("identity", [False, True])
def test_glob_within_glob_is_decided_without_z3(
    identity: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_solver(*args: object, **kwargs: object) -> NetworkModeResult:
        raise AssertionError("Z3 was asked")

    monkeypatch.setattr(network, "solve_network_mode", no_solver)
    cand, bound = _glob_heavy(16)
    outcome = check_network_mode(cand, bound, identity=identity, budget=Budget(10_000))
    assert outcome.verdict is Verdict.WITHIN
    assert outcome.decided_by == "structural"


def test_z3_is_asked_only_about_uncovered_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rule r1 of the candidate allows GET /data/**, the boundary's only GET /data/a*:
    # the probe (GET /data/a) is allowed, Z3 finds /data/<other> in r1's slice alone.
    cand, bound = _glob_heavy(4)
    widened = rest("*.svc1.example.com", allowed_ips=IPS, allow=[http("GET", "/data/**")])
    narrow = rest("**.svc1.example.com", allowed_ips=IPS, allow=[http("GET", "/data/a*")])
    cand = policy(*cand.rules[:1], rule("r1", [widened], ["/usr/bin/*"]), *cand.rules[2:])
    bound = policy(*bound.rules[:1], rule("r1", [narrow], ["/usr/bin/*"]), *bound.rules[2:])
    seen: list[frozenset] = []

    def spy(*args: object, **kwargs: object) -> NetworkModeResult:
        seen.append(kwargs["skip"])  # type: ignore[arg-type]
        return solve_network_mode(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(network, "solve_network_mode", spy)
    outcome = check_network_mode(cand, bound, identity=True, budget=Budget(30_000))
    assert seen == [frozenset({(0, 0), (2, 0), (3, 0)})]
    assert outcome.verdict is Verdict.EXCEEDS
    assert outcome.decided_by == "z3"
    assert outcome.counterexample is not None
    assert outcome.counterexample.host.endswith(".svc1.example.com")


def test_a_widened_rule_far_down_a_policy_is_found_by_a_probe() -> None:
    cand, bound = [], []
    for i in range(64):
        b = rest(f"api{i}.x.com", allow=[http("GET", "/a")])
        c = rest(f"api{i}.x.com", allow=[http("DELETE" if i == 63 else "GET", "/a")])
        bound.append(rule(f"r{i:02}", [b], [CURL]))
        cand.append(rule(f"r{i:02}", [c], [CURL]))
    outcome = check_network_mode(
        policy(*cand), policy(*bound), identity=False, budget=Budget(10_000)
    )
    assert outcome.verdict is Verdict.EXCEEDS
    assert outcome.decided_by == "probe"


_NO_Z3_SCRIPT = """
import sys
from prover.run.budget import Budget
from prover.checks.network import check_network_mode
from prover.policy.loader import load_policy
from prover.policy.normalize import normalize

def rule(host, method):
    return (
        "version: 1\\nnetwork_policies:\\n  r:\\n    binaries: [{path: /usr/bin/curl}]\\n"
        f"    endpoints:\\n    - {{host: '{host}', port: 443, protocol: rest,"
        f" enforcement: enforce, rules: [{{allow: {{method: {method}, path: /a}}}}]}}\\n"
    )

def mode(cand, bound, identity):
    c, b = normalize(load_policy(cand)), normalize(load_policy(bound))
    return check_network_mode(c, b, identity=identity, budget=Budget()).decided_by

assert mode(rule("*.x.com", "GET"), rule("**.x.com", "GET"), True) == "structural"
assert mode(rule("a.x.com", "DELETE"), rule("a.x.com", "GET"), False) == "probe"
print("z3" in sys.modules, "prover.encode.solver" in sys.modules)
"""


def test_pairs_decided_without_z3_do_not_import_it() -> None:
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", _NO_Z3_SCRIPT], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]

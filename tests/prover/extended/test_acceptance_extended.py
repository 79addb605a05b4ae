"""The extended analysis on every acceptance case: it never contradicts the reference.

The reference verdicts are checked exactly in ``tests/prover/checks/test_boundary_cases.py``
(with ``reference_semantics=True``). By default the prover may decide more, but:

* a reference ``within_boundary`` stays within, and a reference ``exceeds_boundary``
  stays an exceed whose witness the candidate surely allows and the boundary surely
  refuses (replayed through the bounds of both readings);
* a reference ``error`` stays an error unless the mainline parser accepts the input;
* nothing the reference decides becomes ``unsupported``, ``inconclusive`` or ``error``,
  except where the mainline runtime refuses a policy (``RUNTIME_REFUSES``): that is an
  ``error`` naming the runtime's reason.
"""

from __future__ import annotations

from typing import Any

import pytest

from prover.api import check_boundary
from prover.concrete.witness import replays
from prover.extended.check import witness_is_real
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.results import NetworkCounterexample, Verdict
from tests.support import boundary_cases

#: Inputs the reference refuses and the mainline runtime parser accepts (the Landlock
#: mode: any other value than hard_requirement is best effort, openshell-core policy.rs).
MAINLINE_ACCEPTS = {
    "cli-schema-error-null-filesystem-candidate",
    "parse-landlock-bad-compatibility-error",
}

#: Cases with a policy the mainline runtime refuses, with its reason as
#: ``openshell-validate`` (OpenShell 2f7fb65) gives it: ``validate_sandbox_policy`` or
#: ``find_endpoint_ambiguities`` (openshell-policy/src/lib.rs, ambiguity.rs). In the
#: default semantics they are errors; the reference verdicts stay as they are.
RUNTIME_REFUSES = {
    "docs-graphql-protocol-unsupported": "network policy 'g': endpoint 0 has invalid L7 "
    "configuration: protocol requires rules or access to define allowed traffic",
    "docs-endpoint-without-host-unsupported": "network policy 'n': endpoint host must not be "
    "empty unless allowed_ips constrains a non-TCP proxy endpoint",
    "net-mcp-in-candidate-unsupported": "network policy 'n': endpoint 0 has invalid L7 "
    "configuration: protocol mcp does not support access presets",
    "parse-relative-fs-path-error": "path must be absolute (start with '/'): tmp",
    "fs-rw-root-boundary-within": "read-write path is overly broad: /",
    "proc-user-root-exceeds": "run_as_user must be 'sandbox' or a numeric UID/GID in range "
    "[1, 4294967294], got 'root'",
    "proc-group-zero-exceeds": "run_as_group must be 'sandbox' or a numeric UID/GID in range "
    "[1, 4294967294], got '0'",
    "ip-same-hostport-different-allowed-ips-unsupported": "network policies 'api' "
    "endpoint[0] (api.example.com:443) and 'api' endpoint[1] (api.example.com:443) overlap "
    'on port(s) 443 with conflicting metadata: allowed_ips=["10.0.0.0/8"] vs ["10.1.0.0/16"]',
    "cli-process-root-counterexample": "run_as_user must be 'sandbox' or a numeric UID/GID "
    "in range [1, 4294967294], got 'root'",
    "cli-surface-graphql-persisted-queries-unsupported": "network policy 'n': endpoint 0 has "
    "invalid L7 configuration: persisted_queries must be 'deny' or 'allow_registered', "
    "got 'allow-list'",
    "cli-schema-error-mcp-on-rest-candidate": "network policy 'n': endpoint '' must declare "
    "at least one port",
}

#: Cases whose verdict the runtime's reading changes (the effective policy, issue 22),
#: with the verdict it gives and the runtime fact it rests on.
RUNTIME_READING = {
    # The boundary's filesystem lists are empty: landlock.rs prepare_with_path_open_mode
    # builds no ruleset, so the boundary may write /tmp too; the identity change stays
    # unresolved without evidence.
    "proc-unresolved-user-does-not-mask-fs-expansion": Verdict.UNSUPPORTED,
}


def _params() -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in boundary_cases()]


@pytest.mark.parametrize("case", _params())
def test_extended_agrees_with_every_reference_decision(case: dict[str, Any]) -> None:
    reference = check_boundary(case["candidate"], case["boundary"], reference_semantics=True)
    extended = check_boundary(case["candidate"], case["boundary"])
    assert extended.receipt.semantics == "extended"
    assert reference.receipt.semantics == "reference"
    expected = reference.outcome.verdict
    got = extended.outcome.verdict
    if case["id"] in RUNTIME_REFUSES:
        assert got is Verdict.ERROR
        assert "the OpenShell runtime refuses it" in (extended.outcome.reason or "")
        assert RUNTIME_REFUSES[case["id"]] in (extended.outcome.reason or "")
        return
    if case["id"] in RUNTIME_READING:
        assert got is RUNTIME_READING[case["id"]], extended.outcome.reason
        return
    if expected is Verdict.ERROR:
        if case["id"] in MAINLINE_ACCEPTS:
            assert got is not Verdict.ERROR
        else:
            assert got is Verdict.ERROR
            assert extended.outcome.reason == reference.outcome.reason
        return
    if expected in (Verdict.WITHIN, Verdict.EXCEEDS):
        assert got is expected, extended.outcome.reason
    assert got is not Verdict.ERROR
    if got is Verdict.EXCEEDS:
        _assert_witness_is_real(case, extended.outcome.counterexample)


def _assert_witness_is_real(case: dict[str, Any], counterexample: object) -> None:
    candidate, boundary = load_policy(case["candidate"]), load_policy(case["boundary"])
    if not isinstance(counterexample, NetworkCounterexample):
        # Filesystem, process and Landlock are read exactly: any bound replays them.
        assert replays(read_policy(candidate).lower, read_policy(boundary).lower, counterexample)
        return
    assert witness_is_real(read_policy(candidate), read_policy(boundary), counterexample)

"""What every result value and reason code means, and how an agent should react.

Served as an MCP resource and used to write the tool's description. Kept as data next
to the result enums; a test checks that every ``Verdict`` and ``ReasonCode`` is here.
"""

from __future__ import annotations

from typing import Any

from prover.results import EXIT_CODES, ReasonCode, Verdict

RESULTS: dict[Verdict, tuple[str, str]] = {
    Verdict.WITHIN: (
        "The candidate allows nothing beyond the boundary in every covered domain "
        "(coverage.domains). This is the only passing result.",
        "Proceed. It does not mean the policy is minimal, safe for the task, or enforced "
        "by a running sandbox; parts of a policy outside coverage.domains were not checked.",
    ),
    Verdict.EXCEEDS: (
        "The candidate allows at least one action the boundary refuses. The counterexample "
        "is one such action (one of possibly many).",
        "Do not use the candidate. Remove or narrow the rule that allows the counterexample, "
        "then check again; repeat until within_boundary.",
    ),
    Verdict.UNSUPPORTED: (
        "A policy uses something the prover does not model, or the answer depends on facts "
        "about the sandbox image it cannot see (symlinks, the working directory, accounts).",
        "Treat as a failure. Read reason and reason_code. If it depends on the image "
        "(unresolved_*), pass environment evidence (the `environment` argument); else "
        "rewrite the candidate so that the named construct matches the boundary exactly "
        "(same paths, same binaries, same identities) or drop it, then check again. Never "
        "treat it as a pass; never widen the boundary to get past it.",
    ),
    Verdict.INCONCLUSIVE: (
        "The prover could not finish: time or size limits, a solver failure, or cancellation.",
        "Treat as a failure. For solver_timeout retry once with a larger timeout or split "
        "the policy; for resource_limit make the policies smaller; never treat it as a pass.",
    ),
    Verdict.ERROR: (
        "The check could not run: an input could not be read or is not a valid policy.",
        "Fix the input named in reason (YAML/JSON syntax, unknown fields, version: 1) and "
        "call again. The policy schema resource lists every valid field.",
    ),
}

REASON_CODES: dict[ReasonCode, tuple[Verdict, str, str]] = {
    ReasonCode.UNSUPPORTED_POLICY_SHAPE: (
        Verdict.UNSUPPORTED,
        "A policy uses a construct the analysis cannot decide soundly: Cedar policies, "
        "unsupported host, path or query globs, non-ASCII selectors, process identities "
        "outside sandbox/root/uid, a boundary middleware the candidate lacks, an opaque "
        "endpoint (websocket, MCP, JSON-RPC, GraphQL, SQL, credential injection) without an "
        "identical boundary endpoint or raw L4 access covering it, or overlapping endpoints "
        "whose answer depends on which one the runtime selects (reason names them). "
        "Endpoints identical on both sides that no other endpoint touches are "
        "never the cause. With --reference-semantics: everything outside the reference "
        "model.",
        "Remove or rewrite the construct named in reason: give an opaque endpoint the "
        "boundary's exact configuration, make overlapping endpoints agree (same protocol, "
        "enforcement, tls and allowed_ips), keep run_as_user/run_as_group identical to the "
        "boundary's.",
    ),
    ReasonCode.UNRESOLVED_WORKDIR: (
        Verdict.UNSUPPORTED,
        "The answer depends on the sandbox image's working directory (include_workdir).",
        "Pass environment evidence naming the image's workdir (the `environment` argument; "
        "`policy-prover environment` writes it), or set include_workdir: false in the "
        "candidate and list the paths it needs. Note that omitting filesystem_policy means "
        "include_workdir: true.",
    ),
    ReasonCode.UNRESOLVED_FILESYSTEM_PATH: (
        Verdict.UNSUPPORTED,
        "A candidate path differs from every boundary path of that access kind; paths are "
        "compared exactly because symlinks in the image could alias them.",
        "Pass environment evidence saying which symlinks the image has beneath the "
        "boundary's path (the `environment` argument, symlinks_complete_beneath); without "
        "it, use exactly the boundary's paths (a subset of them) in the candidate.",
    ),
    ReasonCode.UNRESOLVED_BINARY_PATH: (
        Verdict.UNSUPPORTED,
        "An exact binary path in one policy is covered only by a glob in the other; a "
        "symlink in the image could make it name an executable outside the glob.",
        "Pass environment evidence saying which symlinks the image has (the `environment` "
        "argument); without it, use the boundary's binary paths in the candidate.",
    ),
    ReasonCode.RESOURCE_LIMIT: (
        Verdict.INCONCLUSIVE,
        "The two policies together exceed a size limit (rules, endpoints, patterns).",
        "Check smaller policies, or split the candidate and check each part.",
    ),
    ReasonCode.SOLVER_TIMEOUT: (
        Verdict.INCONCLUSIVE,
        "The check ran out of time.",
        "Retry once with a larger timeout (at most 60000 ms here); if it still times out, "
        "simplify the policies (fewer wildcard hosts).",
    ),
    ReasonCode.SOLVER_UNKNOWN: (
        Verdict.INCONCLUSIVE,
        "The solver gave up without an answer, or the check failed internally.",
        "Treat as a failure; simplify the policies or report the inputs (see receipt).",
    ),
    ReasonCode.INVALID_WITNESS: (
        Verdict.INCONCLUSIVE,
        "The solver found a possible counterexample that did not replay through the "
        "concrete evaluator, so it was not reported.",
        "Treat as a failure; report the inputs (see receipt) so the model can be fixed.",
    ),
    ReasonCode.CANCELLED: (
        Verdict.INCONCLUSIVE,
        "The check was cancelled before it finished.",
        "Run the check again if you still need the answer.",
    ),
    ReasonCode.INVALID_INPUT: (
        Verdict.ERROR,
        "An input could not be read or is not a valid policy (reason says which and why), "
        "or the OpenShell runtime refuses a policy (its validator or endpoint-ambiguity "
        "check; reason lists every violation in its words).",
        "Fix the policy text (every violation named) and call again.",
    ),
}


def catalogue() -> dict[str, Any]:
    """The catalogue as a JSON-ready document."""
    return {
        "passing_results": [Verdict.WITHIN.value],
        "results": [
            {
                "result": verdict.value,
                "exit_code": EXIT_CODES[verdict],
                "meaning": meaning,
                "what_to_do": action,
            }
            for verdict, (meaning, action) in RESULTS.items()
        ],
        "reason_codes": [
            {
                "reason_code": code.value,
                "result": verdict.value,
                "exit_code": 130 if code is ReasonCode.CANCELLED else EXIT_CODES[verdict],
                "meaning": meaning,
                "what_to_do": action,
            }
            for code, (verdict, meaning, action) in REASON_CODES.items()
        ],
    }

"""What an ``unsupported``, ``inconclusive`` or ``error`` result means, and how to rewrite
the policies so that the prover can decide: per reason code, refined per known reason text.

The hints name the rule, field and value from the reason and, where they can be found,
the exact field paths in the policies (``locations``).
"""

from __future__ import annotations

import re
from typing import Any

from prover.explain.locations import (
    exact_binaries_under_globs,
    filesystem_locations,
    glob_deny_binaries,
    related_paths,
    shape_locations,
)
from prover.explain.models import Blocker
from prover.explain.shape_hints import shape_hints
from prover.results import CheckOutcome, ReasonCode

Data = dict[str, Any]

MEANINGS: dict[str, str] = {
    ReasonCode.UNSUPPORTED_POLICY_SHAPE: (
        "A policy uses something the prover does not model, so it cannot say what that part "
        "allows; it reports unsupported instead of guessing. This is a failure, not a pass."
    ),
    ReasonCode.UNRESOLVED_WORKDIR: (
        "The answer depends on the sandbox image's working directory, which the prover does "
        "not know (include_workdir, or a policy without filesystem_policy, adds it)."
    ),
    ReasonCode.UNRESOLVED_FILESYSTEM_PATH: (
        "The prover compares filesystem paths exactly; a path that is merely inside (or "
        "next to) a boundary path could be a symlink to anywhere in the image, so it cannot "
        "decide."
    ),
    ReasonCode.UNRESOLVED_BINARY_PATH: (
        "The answer depends on how binary paths resolve through symlinks in the image: an "
        "exact binary path under a glob may be a link to an executable outside the glob."
    ),
    ReasonCode.RESOURCE_LIMIT: (
        "The two policies together are larger than the prover's limits, so it did not try."
    ),
    ReasonCode.SOLVER_TIMEOUT: "The check ran out of time before deciding.",
    ReasonCode.SOLVER_UNKNOWN: "The solver gave up without an answer (not a timeout).",
    ReasonCode.INVALID_WITNESS: (
        "The solver found a possible violation that could not be turned into a valid "
        "concrete request, so the prover did not trust it either way."
    ),
    ReasonCode.CANCELLED: "The check was cancelled before it finished.",
    ReasonCode.INVALID_INPUT: "A policy could not be read; nothing was checked.",
}

PROCESS_MEANING = (
    "The two policies run the sandbox as different process identities. The prover cannot "
    "look up accounts in the sandbox image, so it cannot order two identities (only a change "
    "from a non-root identity to root is decided, as exceeding); an omitted identity means "
    "the image's default user, which may be root."
)

_CODE_HINTS: dict[str, list[str]] = {
    ReasonCode.RESOURCE_LIMIT: [
        "Split the policy into smaller parts (for example one network rule group per "
        "file) and check each part against the boundary.",
        "Remove duplicate rules, endpoints and allowed_ips entries.",
    ],
    ReasonCode.SOLVER_TIMEOUT: [
        "Run again with a longer time limit (timeout_ms: 30000 in a tool call; --timeout 30s "
        "on the command line).",
        "Or split the policy and check the parts; wildcard hosts that overlap many "
        "endpoints on the same port make the check slower.",
    ],
    ReasonCode.SOLVER_UNKNOWN: [
        "Simplify the policy (split it, replace wildcard hosts and paths by exact ones) and "
        "check again; report the policies if it persists.",
    ],
    ReasonCode.INVALID_WITNESS: [
        "Check again with simpler policies (exact hosts and paths); report the policies, "
        "since this is a limitation of the prover, not of your policy.",
    ],
    ReasonCode.CANCELLED: ["Run the check again and let it finish."],
}

_SIDE = re.compile(r"^(candidate|boundary) policy (.*)$", re.DOTALL)
_RULE = re.compile(r"^rule '(.*?)' (.*)$", re.DOTALL)
_PROCESS = re.compile(r"^process (run_as_user|run_as_group) changes from '(.*?)' to '(.*?)'")
_FS = re.compile(r"^filesystem (read|write) containment for '(.*?)'")
_LIMIT = re.compile(r"\((\w+)=(\d+), limit=(\d+)\)")
_OPAQUE = re.compile(r"^candidate rule '(.*?)' endpoint (\d+) \((.*?)\)(?: and \d+ more)?")


def _extended(reason: str) -> tuple[list[str], list[str]] | None:
    """Hints for the extended analysis's own reasons (prover.extended.check)."""
    opaque = _OPAQUE.match(reason)
    if opaque and "is not covered by" in reason:
        rule, index, construct = opaque.groups()
        return (
            [
                f"The {construct} traffic of candidate rule '{rule}' endpoint {index} is not "
                "modeled, so it is covered only by a boundary endpoint with the identical "
                "configuration (protocol, rules, options, path) on hosts, ports, addresses "
                "and binaries that cover it, or (except for credential injection) by raw L4 "
                "access there.",
                "Copy the boundary's endpoint configuration exactly into the candidate, or "
                "remove the endpoint from the candidate.",
            ],
            [f"candidate: network_policies.{rule}.endpoints[{index}]"],
        )
    if reason.startswith("boundary network middlewares"):
        return (
            [
                "Copy each of the boundary's network_middlewares entries unchanged into the "
                "candidate (the candidate may add its own: they only restrict)."
            ],
            ["candidate: network_middlewares", "boundary: network_middlewares"],
        )
    if reason.startswith("network containment depends on"):
        return (
            [
                "Make endpoints that share a host and port agree on protocol, enforcement, "
                "tls and allowed_ips (or merge them), so that the runtime's choice between "
                "them cannot matter; or give the candidate exactly the boundary's endpoints "
                "there.",
            ],
            [],
        )
    return None


#: Where one shape reason lists several problems ("candidate policy ...; boundary policy ...").
_PROBLEMS = re.compile(r"; (?:and \d+ more$)?(?=(?:candidate|boundary) policy |$)")


def _unsupported(reason: str, candidate: Data, boundary: Data) -> tuple[list[str], list[str]]:
    extended = _extended(reason)
    if extended is not None:
        return extended
    process = _PROCESS.match(reason)
    if process:
        field, bound, cand = process.groups()
        shown = f"'{bound}'" if bound else "unset"
        theirs = f"'{cand}'" if cand else "it unset"
        return (
            [
                f"Use exactly the boundary's value in the candidate: process.{field}: {shown} "
                f"(the candidate has {theirs}). The prover cannot look up accounts in the "
                "image, so only identical identities (or a change to root, which exceeds) "
                "are decided.",
                "Or, if the candidate's identity is intended, change the boundary to list it too.",
            ],
            [f"candidate: process.{field}", f"boundary: process.{field}"],
        )
    problems = [p for p in _PROBLEMS.split(reason) if p]
    if len(problems) > 1:  # every blocker of both policies, one after another
        hints: list[str] = []
        locations: list[str] = []
        for problem in problems:
            more_hints, more_locations = _unsupported(problem, candidate, boundary)
            hints += [h for h in more_hints if h not in hints]
            locations += [loc for loc in more_locations if loc not in locations]
        return hints, locations
    match = _SIDE.match(reason)
    if not match:
        return [f"Rewrite the policies so that: {reason}."], []
    side, detail = match.groups()
    rule_match = _RULE.match(detail)
    rule = rule_match.group(1) if rule_match else None
    data = candidate if side == "candidate" else boundary
    locations = [f"{side}: {p}" for p in shape_locations(data, detail, rule)]
    return shape_hints(side, rule, detail), locations


def _filesystem(reason: str, candidate: Data, boundary: Data) -> tuple[list[str], list[str]]:
    match = _FS.match(reason)
    if not match:
        return ["List the same filesystem paths in both policies."], []
    access, path = match.groups()
    related = related_paths(boundary, path)
    hints = []
    if access == "write" and filesystem_locations(boundary, path):
        hints.append(
            f"The boundary lists {path} for reading only: make it read_only in the candidate "
            f"(move it from read_write), or add {path} to the boundary's read_write."
        )
    elif related:
        listed = ", ".join(related)
        hints.append(
            f"The boundary lists {listed}, not {path}. Use the boundary's path ({related[0]}) "
            f"in the candidate, or add exactly {path} to the boundary's "
            f"{'read_write' if access == 'write' else 'read_only or read_write'}."
        )
    else:
        hints.append(
            f"Add exactly {path} to the boundary (for {access} access), or remove it from the "
            "candidate: the prover compares paths exactly, and a boundary entry of / covers "
            "everything."
        )
    hints.append("List the same paths in both policies whenever you can.")
    beneath = related[0] if related else "/"
    hints.append(
        "Or pass environment evidence (the `environment` argument, --environment) with "
        f"{beneath} in symlinks_complete_beneath: with no unknown symlink there, the "
        "prover resolves the paths and compares them by prefix (format: the policy schema "
        "resource, x-policy-prover.environment; `policy-prover environment` writes it)."
    )
    locations = [f"candidate: {p}" for p in filesystem_locations(candidate, path)]
    return hints, locations


def _workdir(reason: str) -> tuple[list[str], list[str]]:
    if reason.startswith("candidate"):
        return (
            [
                "Set filesystem_policy.include_workdir: false in the candidate (note that a "
                "policy without a filesystem_policy section includes the workdir), or list "
                "the working directory's absolute path in both policies.",
                "Or allow / in the boundary's read_write, which covers any workdir.",
            ],
            ["candidate: filesystem_policy.include_workdir"],
        )
    return (
        [
            "The boundary's include_workdir is the only thing that could cover some "
            "candidate paths: list those paths explicitly in the boundary, or remove them "
            "from the candidate.",
        ],
        ["boundary: filesystem_policy.include_workdir"],
    )


def _binary(reason: str, candidate: Data, boundary: Data) -> tuple[list[str], list[str]]:
    if "deny" in reason:
        return (
            [
                "Use the boundary's exact binary path in the candidate's rule that carries "
                "deny rules, instead of a glob that matches it (the glob could match the "
                "binary through a symlink, or not).",
                "Use the same exact binary paths in both policies when you can.",
            ],
            [f"candidate: {p}" for p in glob_deny_binaries(candidate, boundary)],
        )
    found = exact_binaries_under_globs(candidate, boundary)
    hints = [
        f"The candidate's {path} is covered in the boundary only by the glob {glob}: add "
        f"{path} exactly to that boundary rule (with the same endpoints), or use {glob} in "
        "the candidate."
        for path, _, glob in found[:5]
    ]
    hints.append("Use the same exact binary paths in both policies when you can.")
    return hints, [f"candidate: {where}" for _, where, _ in found]


def _limit(reason: str) -> list[str]:
    match = _LIMIT.search(reason)
    hints = list(_CODE_HINTS[ReasonCode.RESOURCE_LIMIT])
    if match:
        metric, observed, limit = match.groups()
        hints.insert(
            0,
            f"The two policies together have {metric}={observed}, over the limit of {limit}: "
            f"reduce {metric} by at least {int(observed) - int(limit)}.",
        )
    return hints


def blocker_for(outcome: CheckOutcome, candidate: Data, boundary: Data) -> Blocker:
    """Meaning, rewrite hints and locations for a non-passing, non-exceeding result."""
    code = outcome.reason_code
    reason = outcome.reason or ""
    meaning = MEANINGS.get(code, "The prover could not decide.") if code else "Unknown."
    locations: list[str] = []
    if code is ReasonCode.UNSUPPORTED_POLICY_SHAPE:
        hints, locations = _unsupported(reason, candidate, boundary)
        if _PROCESS.match(reason):
            meaning = PROCESS_MEANING
    elif code is ReasonCode.UNRESOLVED_FILESYSTEM_PATH:
        hints, locations = _filesystem(reason, candidate, boundary)
    elif code is ReasonCode.UNRESOLVED_WORKDIR:
        hints, locations = _workdir(reason)
    elif code is ReasonCode.UNRESOLVED_BINARY_PATH:
        hints, locations = _binary(reason, candidate, boundary)
    elif code is ReasonCode.RESOURCE_LIMIT:
        hints = _limit(reason)
    elif code is ReasonCode.INVALID_INPUT:
        hints = input_hints(reason)
    else:
        hints = list(_CODE_HINTS.get(code, ["Check again."])) if code else ["Check again."]
    return Blocker(
        reason_code=code.value if code else None,
        reason=outcome.reason,
        meaning=meaning,
        rewrite_hints=hints,
        locations=locations,
    )


def input_hints(reason: str) -> list[str]:
    refused = "the OpenShell runtime refuses it" in reason
    if "invalid policy: " not in reason and not refused:
        return [
            "Pass a readable regular file of UTF-8 policy text, at most 4 MiB "
            f"({reason}), then explain again."
        ]
    # Both policies' problems come in one reason ("invalid candidate policy: ...;
    # invalid boundary policy: ..."): one hint per policy, each with its own details.
    hints = []
    for part in re.split(r"; (?=invalid (?:candidate|boundary) policy: )", reason):
        which = "boundary" if part.startswith("invalid boundary policy") else "candidate"
        detail = part.split(": ", 1)[-1].removeprefix("invalid policy: ")
        hints.append(f"Fix the {which} policy text ({detail}), then explain again.")
    if refused:
        hints.append(
            "Fix every violation the runtime names: OpenShell never runs such a policy (the "
            "gateway refuses it, and one read from the image is replaced by the restrictive "
            "default), so nothing about it can be proved."
        )
    if "unknown field" in reason:
        hints.append(
            "Remove or rename the unknown field: the policy schema is closed (metadata and "
            "review fields are not part of it)."
        )
    if "version" in reason:
        hints.append("Start the policy with version: 1.")
    if "duplicate key" in reason:
        hints.append("Merge the duplicate keys into one.")
    if "must be a string" in reason:
        hints.append("Quote numeric ids, e.g. run_as_user: '1500'.")
    return hints

"""What an ``unsupported``, ``inconclusive`` or ``error`` result means, and how to rewrite
the policies so that the prover can decide: per reason code, refined per known reason text.

The hints name the rule, field and value from the reason and, where they can be found,
the exact field paths in the policies (``locations``).

They are addressed to whoever writes the candidate: the boundary is the most it may get
(the caller's own policy when vetting a subagent's, or the environment's maximum), never
something to widen, so no hint offers widening the boundary as the fix. Where evidence
about the sandbox image would settle the question, that comes first. Arguments are named
as the MCP tools take them (the `environment` argument, `timeout_ms`);
:func:`cli_words` rewrites them for the command line.
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
        "Run again with a longer time limit (timeout_ms: 30000).",
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
    if reason.startswith("candidate network middlewares"):
        return (
            [
                "Remove from the candidate the network_middlewares entries the boundary does "
                "not have, or copy the boundary's entries unchanged: a middleware may add "
                "headers (credentials) and replace bodies, so only identical ones are the "
                "same authority."
            ],
            ["candidate: network_middlewares"],
        )
    if reason.startswith("boundary network middlewares"):
        return (
            [
                "Copy each of the boundary's network_middlewares entries unchanged into the "
                "candidate (only identical middlewares are the same authority)."
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
                "Or pass environment evidence (the `environment` argument) with the image's "
                "users and groups (name -> number), so that named identities compare.",
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
    hints = shape_hints(side, rule, detail)
    if "host uses an unsupported pattern" in detail and _any_host(data, rule):
        hints.insert(0, ANY_HOST_HINT)
    return hints, locations


#: What the runtime does with "any host", read from OpenShell's validator
#: (crates/openshell-policy/src/lib.rs, ``validate_sandbox_policy`` and
#: ``host_wildcard_shape_invalid``: InvalidHostWildcard, TldWildcard).
ANY_HOST_HINT = (
    "Host '*' and '**' mean any host, and OpenShell's validator refuses them in every "
    "policy. It accepts a wildcard as the whole first label of a host with at least three "
    "labels: '*.example.com' (one label: a.example.com, not a.b.example.com) or "
    "'**.example.com' (any depth of subdomains); or inside the first label "
    "('api-*.example.com'); a TLD wildcard ('*.com') is refused. List each domain the task "
    "needs with its own wildcard."
)


#: The runtime validator's refusal of "any host" (validate_sandbox_policy's
#: InvalidHostWildcard message), as an input error names it.
_ANY_HOST_REFUSED = re.compile(r"invalid host wildcard '\*\*?'")


def _any_host(data: Data, rule: str | None) -> bool:
    """Whether a network rule (``rule``, or any when None) has a host of '*' or '**'."""
    rules = data.get("network_policies")
    if not isinstance(rules, dict):
        return False
    chosen = [rules.get(rule)] if rule is not None else list(rules.values())
    return any(
        isinstance(endpoint, dict) and str(endpoint.get("host", "")).strip() in ("*", "**")
        for entry in chosen
        if isinstance(entry, dict)
        for endpoint in entry.get("endpoints") or []
    )


def _filesystem(reason: str, candidate: Data, boundary: Data) -> tuple[list[str], list[str]]:
    match = _FS.match(reason)
    if not match:
        return ["List the same filesystem paths in both policies."], []
    access, path = match.groups()
    related = related_paths(boundary, path)
    beneath = related[0] if related else "/"
    # Evidence settles it without taking anything from the candidate: first.
    hints = [
        f"Pass environment evidence (the `environment` argument) with {beneath} in "
        "symlinks_complete_beneath: with no unknown symlink there, the prover resolves the "
        "paths and compares them by prefix (format in the argument's description; "
        "`policy-prover environment` writes it)."
    ]
    if access == "write" and filesystem_locations(boundary, path):
        hints.append(
            f"Or, without evidence: the boundary lists {path} for reading only, so make it "
            "read_only in the candidate (move it from read_write)."
        )
    elif related:
        listed = ", ".join(related)
        hints.append(
            f"Or, without evidence: the boundary lists {listed}, not {path}; use the "
            f"boundary's path ({related[0]}) in the candidate, or remove {path} from it."
        )
    else:
        hints.append(
            f"Or, without evidence: remove {path} from the candidate (the boundary lists no "
            "path it could be compared with)."
        )
    locations = [f"candidate: {p}" for p in filesystem_locations(candidate, path)]
    return hints, locations


def _workdir(reason: str) -> tuple[list[str], list[str]]:
    if reason.startswith("candidate"):
        return (
            [
                "Pass environment evidence naming the image's working directory (the "
                "`environment` argument, workdir: /path).",
                "Or set filesystem_policy.include_workdir: false in the candidate (note that a "
                "policy without a filesystem_policy section includes the workdir), and list "
                "the paths the task needs explicitly.",
            ],
            ["candidate: filesystem_policy.include_workdir"],
        )
    return (
        [
            "The boundary's include_workdir is the only thing that could cover some "
            "candidate paths: pass environment evidence naming the image's working "
            "directory (the `environment` argument, workdir: /path), or remove those paths "
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
        "Pass environment evidence (the `environment` argument) listing the image's "
        "symlinks beneath the binaries' directory (symlinks_complete_beneath), so that exact "
        "binaries compare with the boundary's globs."
    ]
    hints += [
        f"Or, without evidence: the candidate's {path} is covered in the boundary only by "
        f"the glob {glob}; use {glob} in the candidate."
        for path, _, glob in found[:5]
    ]
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


#: MCP argument wording -> command-line wording (hints are written for MCP callers).
_CLI_WORDS = (
    ("(the `environment` argument, workdir: /path)", "(--environment FILE, workdir: /path)"),
    ("(the `environment` argument)", "(--environment FILE)"),
    ("the `environment` argument", "--environment FILE"),
    ("timeout_ms: 30000", "--timeout 30s"),
    ("format in the argument's description", "format: the policy schema resource"),
)


def cli_words(text: str) -> str:
    """A hint with the MCP tools' argument names replaced by the command line's flags."""
    for mcp, cli in _CLI_WORDS:
        text = text.replace(mcp, cli)
    return text


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
    if _ANY_HOST_REFUSED.search(reason):  # the runtime's validator refusing host * or **
        hints.insert(0, ANY_HOST_HINT)
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

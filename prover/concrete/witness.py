"""Counterexamples as concrete actions, and their replay through the concrete evaluator.

Used by the tests and by ``explain`` to confirm, without Z3, that a reported action is
allowed by the candidate and refused by the boundary.
"""

from __future__ import annotations

import ipaddress

from prover.concrete import allows
from prover.concrete.filesystem import filesystem_allows
from prover.policy.model import FilesystemAction, NetworkAction, Policy
from prover.results import FilesystemCounterexample, NetworkCounterexample

#: Stands for the image's working directory, which the prover never resolves.
WORKDIR = "<OCI_WORKDIR>"


def network_action(cex: NetworkCounterexample) -> NetworkAction:
    return NetworkAction(
        host=cex.host,
        port=cex.port,
        destination_ip=ipaddress.ip_address(cex.destination_ip),
        protocol=cex.protocol,
        method=cex.method,
        path=cex.path,
        query=tuple((k, tuple(v)) for k, v in (cex.query_params or {}).items()),
        binary=cex.binary,
        ancestor_binary=cex.ancestor_binary,
        binary_identity_required=cex.binary_identity_required,
        trusted_gateway=cex.trusted_gateway,
    )


def replays(candidate: Policy, boundary: Policy, cex: object) -> bool:
    """True if the candidate allows the counterexample's action and the boundary does not.

    Process and Landlock counterexamples are configuration comparisons; they replay when
    the two policies carry the values the counterexample names.
    """
    if isinstance(cex, NetworkCounterexample):
        action = network_action(cex)
        return allows(candidate, action) and not allows(boundary, action)
    if isinstance(cex, FilesystemCounterexample):
        fs_action = FilesystemAction(access=cex.access, path=cex.path)
        return filesystem_allows(candidate, fs_action, WORKDIR) and not filesystem_allows(
            boundary, fs_action, WORKDIR
        )
    field = getattr(cex, "field", None)
    if field is not None:
        return getattr(boundary, field) == cex.boundary and getattr(candidate, field) == (
            cex.candidate
        )
    return (
        boundary.landlock_compatibility == "hard_requirement"
        and candidate.landlock_compatibility != "hard_requirement"
    )


def _is_exact(binary: str) -> bool:
    return not any(char in binary for char in "*?[")


def enforced_witness(
    candidate: Policy, boundary: Policy, cex: NetworkCounterexample, binaries: list[str]
) -> NetworkCounterexample | None:
    """The same action by one of ``binaries`` with binary identity enforced, when the
    concrete evaluator shows the candidate allows it and the boundary refuses it.

    A witness found where binary identity is not enforced says "any process", which reads
    as "binaries do not matter" for a rule that lists binaries; the same action by the
    rule's own binary, in the mode that checks binaries, names who is granted.
    """
    if cex.binary_identity_required:
        return None
    for binary in binaries:
        if not _is_exact(binary):
            continue
        named = cex.model_copy(
            update={"binary": binary, "ancestor_binary": binary, "binary_identity_required": True}
        )
        if replays(candidate, boundary, named):
            return named
    return None

"""Counterexamples as concrete actions, and their replay through the concrete evaluator.

Used by the tests and by ``explain`` to confirm, without Z3, that a reported action is
allowed by the candidate and refused by the boundary.
"""

from __future__ import annotations

import ipaddress

from prover.concrete import allows
from prover.concrete.filesystem import filesystem_allows
from prover.model import FilesystemAction, NetworkAction, Policy
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

"""The concrete evaluator: does a normalised policy allow one concrete action?

This is the project's ground truth. Every counterexample the solver finds is replayed
through it, and the soundness tests compare the Z3 encodings against it, so it is
written in plain Python (``ipaddress`` and hand-written glob matchers), with no Z3.
"""

from __future__ import annotations

from prover.concrete.canonical import (
    is_action_domain_binary,
    is_action_domain_path,
    is_canonical_binary,
    is_canonical_host,
    is_canonical_pattern_path,
    is_canonical_rest_path,
    is_http_token,
    is_upper_http_token,
)
from prover.concrete.execution import (
    IdentityChange,
    compare_identity,
    landlock_is_hard,
    landlock_weakened,
    process_identity_is_root,
    process_identity_supported,
)
from prover.concrete.filesystem import filesystem_allows, path_is_covered
from prover.concrete.glob import binary_matches, host_matches, path_matches
from prover.concrete.ip import (
    endpoint_ip_ok,
    is_control_port,
    is_gateway_alias,
    is_hard_blocked,
    is_internal,
)
from prover.concrete.network import (
    DenyEntry,
    GrantEntry,
    denying_entries,
    granting_entries,
    ip_ok,
    method_matches,
    network_allows,
)
from prover.concrete.query import allow_query_matches, deny_query_matches
from prover.policy.model import FilesystemAction, NetworkAction, Policy


def allows(
    policy: Policy, action: FilesystemAction | NetworkAction, workdir: str | None = None
) -> bool:
    """Whether ``policy`` allows ``action``; ``workdir`` only matters for filesystem
    actions of a policy with ``include_workdir``."""
    if isinstance(action, FilesystemAction):
        return filesystem_allows(policy, action, workdir)
    if isinstance(action, NetworkAction):
        return network_allows(policy, action)
    raise TypeError(f"not a concrete action: {type(action).__name__}")


__all__ = [
    "DenyEntry",
    "GrantEntry",
    "IdentityChange",
    "allow_query_matches",
    "allows",
    "binary_matches",
    "compare_identity",
    "deny_query_matches",
    "denying_entries",
    "endpoint_ip_ok",
    "filesystem_allows",
    "granting_entries",
    "host_matches",
    "ip_ok",
    "is_action_domain_binary",
    "is_action_domain_path",
    "is_canonical_binary",
    "is_canonical_host",
    "is_canonical_pattern_path",
    "is_canonical_rest_path",
    "is_control_port",
    "is_gateway_alias",
    "is_hard_blocked",
    "is_http_token",
    "is_internal",
    "is_upper_http_token",
    "landlock_is_hard",
    "landlock_weakened",
    "method_matches",
    "network_allows",
    "path_is_covered",
    "path_matches",
    "process_identity_is_root",
    "process_identity_supported",
]

"""Host-pattern overlap and link-local / metadata recognition for the proposal check.

Overlap answers "is there a hostname both patterns can match?". The reference
(``credentials_for_host``) asks instead whether either side *covers* the other, treating
the other side's ``*`` as a literal character. Whenever one side is a concrete host the
two questions agree; with wildcards on both sides (``*.github.com`` against a credential
target ``api.*.com``) the reference says "no" although ``api.github.com`` is matched by
both. This module answers the exact intersection question, which is never smaller than
the reference's answer, so it can only add findings, never hide one.

Label semantics follow the reference's credential matcher: labels are compared after
trimming, stripping trailing dots and lower-casing; a label that is exactly ``**`` in
first position stands for one or more labels; any other label containing ``*`` is a
single-label glob (``*`` alone needs a non-empty label). Real DNS labels are never
empty, so every label word considered here is non-empty.
"""

from __future__ import annotations

import ipaddress

from prover.runtime.globs import host_tokens, languages_overlap

METADATA_HOSTNAMES: tuple[str, ...] = ("metadata.google.internal",)
_LINK_LOCAL_V4 = ipaddress.IPv4Network("169.254.0.0/16")
_LINK_LOCAL_V6 = ipaddress.IPv6Network("fe80::/10")


def normalize_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _label_globs_intersect(left: str, right: str) -> bool:
    """Whether some non-empty label matches both single-label globs."""
    return languages_overlap(host_tokens(left), host_tokens(right), ".", nonempty=True)


def _labels_intersect(left: list[str], right: list[str]) -> bool:
    return len(left) == len(right) and all(
        a == b or _label_globs_intersect(a, b) for a, b in zip(left, right, strict=True)
    )


def patterns_overlap(left: str, right: str) -> bool:
    """Whether some hostname is matched by both host patterns (exact hosts included)."""
    a, b = normalize_host(left), normalize_host(right)
    if not a or not b:
        return False
    if a == b:
        return True
    left_labels, right_labels = a.split("."), b.split(".")
    left_any, right_any = left_labels[0] == "**", right_labels[0] == "**"
    if not left_any and not right_any:
        return _labels_intersect(left_labels, right_labels)
    if left_any and right_any:
        left_tail, right_tail = left_labels[1:], right_labels[1:]
        width = min(len(left_tail), len(right_tail))
        return _labels_intersect(
            left_tail[len(left_tail) - width :], right_tail[len(right_tail) - width :]
        )
    recursive, fixed = (left_labels, right_labels) if left_any else (right_labels, left_labels)
    tail = recursive[1:]
    if len(fixed) <= len(tail):
        return False
    return _labels_intersect(tail, fixed[len(fixed) - len(tail) :])


def is_link_local_literal(host: str) -> bool:
    """An IP literal in 169.254.0.0/16 or fe80::/10, or an IPv4-mapped 169.254.x.y.

    The reference does not recognise the IPv4-mapped form (spec §3.6); it is included
    here because ``::ffff:169.254.169.254`` reaches the same metadata service.
    """
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv4Address):
        return address in _LINK_LOCAL_V4
    mapped = address.ipv4_mapped
    return address in _LINK_LOCAL_V6 or (mapped is not None and mapped in _LINK_LOCAL_V4)


def is_link_local_or_metadata(host: str) -> bool:
    """Tier 1 of spec §3.6: link-local literal, or a host that can be a metadata name.

    The reference compares the normalised host with ``metadata.google.internal`` only;
    a wildcard that can match it (``*.google.internal``) is treated the same way here.
    """
    if is_link_local_literal(host):
        return True
    return any(patterns_overlap(host, name) for name in METADATA_HOSTNAMES)

"""Needs: the requests a fix must keep working.

A caller passes the requests its task depends on, in the shape of a counterexample: a
network request (``host``, ``port``, optional ``binary``, ``method``, ``path``,
``destination_ip``, ``query_params``) or a filesystem access (``path``, ``access``:
``read``/``write``). Before fixing, each need is read against both policies: one the
boundary refuses *is* the answer for that need (no fix can keep it; the closest boundary
entry is named), one the candidate does not grant has nothing to keep (a fix only
narrows). Every other need is *held*: the fix loop rejects any option that would stop
allowing it, so a verified fix keeps every held need, and the final fixed candidate is
evaluated again to say so.

Needs only steer which fixes are chosen; every fix is still proved within the boundary
and within the candidate, so a need can never make a fix less sound.

The evaluation is concrete (no Z3). A network need is one request: with a ``binary``
the runtime's binary identity check applies (the ancestor is the binary itself unless
``ancestor_binary`` says otherwise); without one it is any process with binary identity
not enforced. ``method``/``path`` make it a REST request (``GET`` and ``/`` fill the
one left out); without both it is an L4 connection. The destination address is
``destination_ip`` or, for a host name, a public address (:data:`PUBLIC_ADDRESS`). A
filesystem need is granted by an entry equal to its path or a directory above it (the
hierarchy beneath a listed directory, as Landlock grants it).
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prover.concrete import allows
from prover.policy.model import FilesystemAction, NetworkAction, Policy
from prover.results import FilesystemCounterexample, NetworkCounterexample

#: At most this many needs in one call.
MAX_NEEDS = 20
#: The destination address of a network need to a host name without ``destination_ip``.
PUBLIC_ADDRESS = "1.1.1.1"

#: A network need has a counterexample's fields.
_NETWORK_KEYS = frozenset(NetworkCounterexample.__slots__)
_FILESYSTEM_KEYS = frozenset({"domain", "path", "access", "mode"})
_METHOD = re.compile(r"^[A-Za-z]{1,16}$")
_HOST = re.compile(r"^[A-Za-z0-9._:\-\[\]]{1,253}$")
_MAX_TEXT = 1024


class NeedsError(ValueError):
    """A need that cannot be read; the message names the field (``needs[0].port``)."""


@dataclass(frozen=True)
class Need:
    """One request that must keep working."""

    number: int
    line: str
    action: NetworkAction | FilesystemAction

    def counterexample(self) -> NetworkCounterexample | FilesystemCounterexample:
        """The need as a counterexample object (to find the closest boundary entries)."""
        action = self.action
        if isinstance(action, FilesystemAction):
            return FilesystemCounterexample(
                domain="filesystem", access=action.access, path=action.path
            )
        from prover.checks.network_report import network_counterexample

        return network_counterexample(action)


# ---------------------------------------------------------------------------------------
# Reading


def _text(value: object, where: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or len(value) > _MAX_TEXT:
        raise NeedsError(f"{where}: must be a non-empty string of at most {_MAX_TEXT} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise NeedsError(f"{where}: must not contain control characters")
    return value


def _absolute(value: object, where: str, *, required: bool = True) -> str | None:
    text = _text(value, where, required=required)
    if text is None:
        return None
    if not text.startswith("/"):
        raise NeedsError(f"{where}: must be an absolute path starting with /")
    return text


def _port(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise NeedsError(f"{where}: must be an integer port from 1 to 65535")
    return value


def _query(value: object, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise NeedsError(f"{where}: must be an object of key -> list of values")
    result: list[tuple[str, tuple[str, ...]]] = []
    for key, values in value.items():
        if not isinstance(key, str) or not isinstance(values, list):
            raise NeedsError(f"{where}.{key}: must be a list of strings")
        if not all(isinstance(v, str) for v in values):
            raise NeedsError(f"{where}.{key}: must be a list of strings")
        result.append((key, tuple(values)))
    return tuple(result)


def _network(raw: Mapping[str, Any], where: str) -> NetworkAction:
    unknown = sorted(set(raw) - _NETWORK_KEYS)
    if unknown:
        raise NeedsError(f"{where}.{unknown[0]}: unknown field of a network need")
    host = _text(raw.get("host"), f"{where}.host")
    assert host is not None
    if not _HOST.match(host):
        raise NeedsError(
            f"{where}.host: must be one concrete host name or address (no wildcard): {host!r}"
        )
    port = _port(raw.get("port"), f"{where}.port")
    binary = _absolute(raw.get("binary"), f"{where}.binary", required=False)
    ancestor = _absolute(raw.get("ancestor_binary"), f"{where}.ancestor_binary", required=False)
    if ancestor is not None and binary is None:
        raise NeedsError(f"{where}.ancestor_binary: needs a binary")
    method = _text(raw.get("method"), f"{where}.method", required=False)
    if method is not None and not _METHOD.match(method):
        raise NeedsError(f"{where}.method: must be an HTTP method such as GET")
    path = _absolute(raw.get("path"), f"{where}.path", required=False)
    given = raw.get("protocol")
    if given not in (None, "l4", "rest") or (
        given == "l4" and (method is not None or path is not None)
    ):
        raise NeedsError(
            f"{where}.protocol: must be 'rest' (a request) or 'l4' (a connection, no method "
            "or path)"
        )
    protocol = "rest" if method is not None or path is not None or given == "rest" else "l4"
    if protocol == "rest":
        method = (method or "GET").upper()
        path = path or "/"
    address = raw.get("destination_ip")
    literal = _literal(host)
    if address is None:
        destination = literal or ipaddress.ip_address(PUBLIC_ADDRESS)
    else:
        try:
            destination = ipaddress.ip_address(str(address))
        except ValueError:
            raise NeedsError(f"{where}.destination_ip: not an IP address") from None
    gateway = raw.get("trusted_gateway", False)
    if not isinstance(gateway, bool):
        raise NeedsError(f"{where}.trusted_gateway: must be true or false")
    identity = raw.get("binary_identity_required")
    if identity is not None and identity is not (binary is not None):
        raise NeedsError(
            f"{where}.binary_identity_required: is true exactly when a binary is given"
        )
    return NetworkAction(
        host=host,
        port=port,
        destination_ip=destination,
        protocol=protocol,
        method=method,
        path=path,
        query=_query(raw.get("query_params"), f"{where}.query_params"),
        binary=binary,
        ancestor_binary=(ancestor or binary) if binary is not None else None,
        binary_identity_required=binary is not None,
        trusted_gateway=gateway,
    )


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _filesystem(raw: Mapping[str, Any], where: str) -> FilesystemAction:
    unknown = sorted(set(raw) - _FILESYSTEM_KEYS)
    if unknown:
        raise NeedsError(f"{where}.{unknown[0]}: unknown field of a filesystem need")
    access = raw.get("access", raw.get("mode"))
    if "access" in raw and "mode" in raw and raw["access"] != raw["mode"]:
        raise NeedsError(f"{where}.mode: differs from access; give one of them")
    if access not in ("read", "write"):
        raise NeedsError(f"{where}.access: must be 'read' or 'write'")
    path = _absolute(raw.get("path"), f"{where}.path")
    assert path is not None
    return FilesystemAction(access=access, path=posixpath.normpath(path).replace("//", "/"))


def _is_network(raw: Mapping[str, Any]) -> bool:
    domain = raw.get("domain")
    if domain is not None:
        return domain == "network"
    return "host" in raw or "port" in raw


def read_needs(value: Sequence[Any] | None) -> list[Need]:
    """The needs as given (a list of objects), or :class:`NeedsError` naming the field."""
    if value is None:
        return []
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise NeedsError("needs: must be a list of request objects")
    if len(value) > MAX_NEEDS:
        raise NeedsError(f"needs: at most {MAX_NEEDS} needs, got {len(value)}")
    needs: list[Need] = []
    for index, raw in enumerate(value):
        where = f"needs[{index}]"
        if not isinstance(raw, Mapping):
            raise NeedsError(f"{where}: must be an object")
        domain = raw.get("domain")
        if domain not in (None, "network", "filesystem"):
            raise NeedsError(f"{where}.domain: must be 'network' or 'filesystem'")
        action: NetworkAction | FilesystemAction = (
            _network(raw, where) if _is_network(raw) else _filesystem(raw, where)
        )
        needs.append(Need(index + 1, need_line(action), action))
    return needs


def need_line(action: NetworkAction | FilesystemAction) -> str:
    """The need in one line, e.g. ``/usr/bin/curl: GET /x api.github.com:443``."""
    if isinstance(action, FilesystemAction):
        return f"{action.access} {action.path}"
    who = action.binary if action.binary_identity_required else "any process"
    how = f"{action.method} {action.path}" if action.protocol == "rest" else "connect"
    if action.query:
        how += "?" + "&".join(f"{k}={v}" for k, vs in action.query for v in vs)
    where = f"{action.host}:{action.port}"
    if action.destination_ip != _literal(action.host):
        where += f" ip {action.destination_ip}"
    return f"{who}: {how} {where}"


# ---------------------------------------------------------------------------------------
# Evaluating


def _under(path: str, entries: Sequence[str]) -> bool:
    return any(
        entry == "/" or path == entry.rstrip("/") or path.startswith(entry.rstrip("/") + "/")
        for entry in entries
    )


def need_allowed(policy: Policy, need: Need) -> bool:
    """Whether ``policy`` allows the need (see the module docstring for the reading)."""
    action = need.action
    if isinstance(action, FilesystemAction):
        fs = policy.filesystem
        entries = fs.read_write if action.access == "write" else (*fs.read_only, *fs.read_write)
        return _under(action.path, entries)
    return allows(policy, action)


def first_dropped(policy: Policy, needs: Sequence[Need]) -> Need | None:
    """The first need ``policy`` no longer allows, if any."""
    for need in needs:
        if not need_allowed(policy, need):
            return need
    return None


def dropped_reason(need: Need) -> str:
    return f"it would stop allowing need {need.number} ({need.line})"


# ---------------------------------------------------------------------------------------
# Reporting


def _closest_path(boundary: Policy, need: Need, section: str) -> str | None:
    """The boundary's filesystem entry sharing the most leading directories with the
    need's path (None when none shares any), and the access it gives."""
    action = need.action
    assert isinstance(action, FilesystemAction)
    best: tuple[int, str] | None = None
    fs = boundary.filesystem
    for name in ("read_write", "read_only"):
        for index, entry in enumerate(getattr(fs, name)):
            common = posixpath.commonpath([entry, action.path])
            shared = 0 if common == "/" else common.count("/")
            access = "read and write" if name == "read_write" else "read only"
            if shared and (best is None or shared > best[0]):
                best = (shared, f"{section}.{name}[{index}] = '{entry}' ({access})")
    return None if best is None else best[1]


def closest_text(boundary: Policy, need: Need, section: str) -> str | None:
    """The boundary entry that comes closest to allowing the need, and what it fails on."""
    if isinstance(need.action, FilesystemAction):
        return _closest_path(boundary, need, section)
    from prover.explain.closest import closest_boundary_rules

    rules = closest_boundary_rules(boundary, need.counterexample(), section)
    if not rules:
        return None
    rule = rules[0]
    fails = "; ".join(m.detail for m in rule.fails_on)
    return f"{rule.path} ({rule.summary})" + (f": {fails}" if fails else "")

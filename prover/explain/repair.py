"""Repairs of a candidate the runtime refuses: a policy it runs, narrowed as the fixes narrow.

The default semantics answers ``error`` for a policy OpenShell's validator refuses
(:mod:`prover.runtime.validation`): nothing can be proved about a policy the sandbox
never runs. Agents often write such a candidate first (``read_write: [/]``, ``root``,
host ``*``), and the boundary says what they meant. :func:`repair_refused` turns the
candidate into a policy the runtime runs, towards the boundary:

- a writable ``/`` (``read-write path is overly broad``) becomes the boundary's writable
  paths as written (dropped when it has none); other invalid paths are removed;
- an invalid ``run_as_user``/``run_as_group`` becomes the boundary's value when valid,
  else is removed (the runtime's default);
- an endpoint whose host the validator refuses (``*``, ``**``, a TLD or malformed
  wildcard, an invalid DNS selector) becomes one endpoint per boundary host on a port it
  shares (every other field kept), or is removed when the boundary has none;
- an invalid port is removed (the endpoint too, when it has no port left); an L7
  endpoint without ``rules`` or ``access`` takes those of the boundary's endpoint on the
  same host, protocol and a shared port; an endpoint with any other violation (an L7
  configuration, signing) is removed, and a rule left without endpoints with it.

Of two endpoints the runtime finds ambiguous, the later (in rule-key order) is removed.
Every removal is named. What is refused after the repairs (middleware configurations,
too many paths) is not guessed at: ``remaining`` names it and no repaired candidate is
offered. The repairs are not proved to narrow the original
(the prover reads nothing of a refused policy); the explanation says so, and proves the
fix of the repaired candidate within the boundary as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prover.errors import PolicyLoadError
from prover.explain.document import (
    Data,
    Edit,
    apply_edit,
    dump_text,
    filesystem_key,
    read_data,
    remove_value,
    set_value,
    tree_copy,
)
from prover.explain.origin import original_location
from prover.policy.loader import PolicyRefusedError, load_policy, policy_data
from prover.policy.paths import Location, render_path
from prover.run.budget import BudgetExhausted
from prover.runtime.ambiguity import ambiguous_pairs
from prover.runtime.data import ports, text
from prover.runtime.validation import MAX_PATH_LENGTH, endpoint_violations, is_valid_identity

_IDENTITY_FIELDS = ("run_as_user", "run_as_group")
#: Words of the validator's endpoint violations that a host replacement repairs
#: (``_host_violations``, the TLD and wildcard-shape checks of ``validation._endpoint``).
_HOST_WORDS = ("TLD wildcard", "invalid host wildcard", "invalid DNS host selector")


@dataclass
class Repair:
    """The repaired candidate (``data``/``text``; ``None`` when ``remaining``), the edits
    that made it (paths in the original candidate, applied in order), one sentence per
    repair (``notes``), the runtime's reasons for refusing the original (``refusals``)
    and what it still refuses after the repairs (``remaining``)."""

    refusals: tuple[str, ...]
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: Data | None = None
    text: str | None = None
    remaining: tuple[str, ...] = ()


def repair_refused(
    candidate: str | bytes,
    boundary: str | bytes,
    checkpoint: Callable[[], None] | None = None,
) -> Repair | None:
    """The repair of a candidate that the runtime refuses (default semantics), against a
    boundary it runs; ``None`` when the candidate is not refused by the runtime (it
    loads, or fails earlier: unreadable, unknown fields, schema) or the boundary does
    not load."""
    try:
        load_policy(candidate, checkpoint, runtime=True)
        return None
    except PolicyRefusedError as error:
        refusals = error.refusals
    except BudgetExhausted:
        raise
    except Exception:
        return None
    try:
        load_policy(boundary, checkpoint, runtime=True)
        bound = read_data(boundary)
        data = read_data(candidate)
    except BudgetExhausted:
        raise
    except Exception:
        return None
    repair = Repair(refusals=refusals)
    _repair_process(data, bound, repair)
    _repair_filesystem(data, bound, repair)
    _repair_network(data, bound, repair)
    _repair_ambiguities(data, repair, checkpoint)
    repair.remaining = _refused(data, checkpoint)
    if not repair.remaining:
        repair.data, repair.text = data, dump_text(data)
    return repair


def _refused(data: Data, checkpoint: Callable[[], None] | None) -> tuple[str, ...]:
    """What the runtime refuses in the repaired document (its schema errors included)."""
    try:
        load_policy(dump_text(data), checkpoint, runtime=True)
    except PolicyRefusedError as error:
        return error.refusals
    except PolicyLoadError as error:
        return (error.message,)
    return ()


def _section(data: Data, key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _identity(value: Any) -> str | None:
    """An identity as the runtime reads it (mainline reads a number as its digits)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) else None


def _repair_process(data: Data, bound: Data, repair: Repair) -> None:
    process = _section(data, "process")
    limits = _section(bound, "process")
    for name in _IDENTITY_FIELDS:
        if name not in process:
            continue
        value = _identity(process[name])
        if value is None or not value or is_valid_identity(value):
            continue
        location: Location = ("process", name)
        wanted = limits.get(name)
        wanted_text = _identity(wanted)
        if wanted_text and is_valid_identity(wanted_text):
            set_value(data, location, wanted, repair.edits)
            repair.notes.append(f"{render_path(location)} '{value}' -> the boundary's '{wanted}'")
        else:
            remove_value(data, location, repair.edits)
            repair.notes.append(
                f"{render_path(location)} '{value}' removed (the boundary sets no valid "
                "value; the runtime's default applies)"
            )


def _path_problem(path: Any) -> str | None:
    """Why the validator refuses a filesystem path other than a writable ``/``."""
    if not isinstance(path, str):
        return "not a path"
    if len(path.encode("utf-8")) > MAX_PATH_LENGTH:
        return "too long"
    if not path.startswith("/"):
        return "not absolute"
    if ".." in path.split("/"):
        return "contains '..'"
    return None


def _repair_filesystem(data: Data, bound: Data, repair: Repair) -> None:
    key = filesystem_key(data)
    section = _section(data, key)
    if not section:
        return
    limits = _section(bound, filesystem_key(bound))
    writable = [p for p in limits.get("read_write") or [] if isinstance(p, str)]
    readable = [p for p in limits.get("read_only") or [] if isinstance(p, str)]
    had_paths = False
    for list_name in ("read_only", "read_write"):
        paths = section.get(list_name)
        if not isinstance(paths, list):
            continue
        had_paths = had_paths or bool(paths)
        index = 0
        for number, path in enumerate(list(paths)):
            location: Location = (key, list_name, index)
            named = render_path((key, list_name, number))
            problem = _path_problem(path)
            broad = problem is None and list_name == "read_write" and not path.rstrip("/")
            if problem is None and not broad:
                index += 1
                continue
            remove_value(data, location, repair.edits)
            if problem is not None:
                repair.notes.append(f"{named} {path!r} removed ({problem})")
                continue
            added = [p for p in writable if p not in section[list_name]]
            for offset, new in enumerate(added):
                edit = Edit("add", (key, list_name, index + offset), new=new, origin=location)
                apply_edit(data, edit)
                repair.edits.append(edit)
            index += len(added)
            repair.notes.append(
                f"{named} writable '{path}' -> the boundary's writable paths "
                + (", ".join(added) if added else "(none: removed)")
            )
    if had_paths and not any(section.get(name) for name in ("read_only", "read_write")):
        # Both lists empty would run without Landlock at all (prover.runtime): keep it on,
        # reading what the boundary reads (``/`` when it reads nothing: it has no Landlock).
        location = (key, "read_only")
        reads = readable or ["/"]
        if isinstance(section.get("read_only"), list):
            for offset, new in enumerate(reads):
                edit = Edit("add", (*location, offset), new=new)
                apply_edit(data, edit)
                repair.edits.append(edit)
        else:
            set_value(data, location, reads, repair.edits)
        repair.notes.append(
            f"{render_path(location)} {', '.join(reads)} added, so that Landlock stays on "
            "(with both lists empty the runtime would run without it)"
        )


def _boundary_hosts(bound: Data, wanted: list[int]) -> list[str]:
    """The boundary's hosts with an endpoint on one of ``wanted`` ports, first seen first."""
    found: list[str] = []
    rules = _section(bound, "network_policies")
    for rule in rules.values():
        endpoints = rule.get("endpoints") if isinstance(rule, dict) else None
        for endpoint in endpoints if isinstance(endpoints, list) else []:
            if not isinstance(endpoint, dict):
                continue
            host = text(endpoint, "host")
            if host and host not in found and set(ports(endpoint)) & set(wanted):
                found.append(host)
    return found


def _violations(name: str, index: int, endpoint: Data) -> list[str]:
    """The validator's violations of one endpoint, read as mainline's parser reads it
    (an empty ``rules``/``deny_rules`` list is absent: ``prover.policy.mainline``)."""
    read = {k: v for k, v in endpoint.items() if not (k in ("rules", "deny_rules") and v == [])}
    return endpoint_violations(name, index, read)


def _valid_ports(endpoint: Data) -> Data | None:
    """``endpoint`` without its invalid ports; ``None`` when none is left."""
    fixed = tree_copy(endpoint)
    listed = fixed.get("ports")
    if isinstance(listed, list) and listed:
        kept = [p for p in listed if isinstance(p, int) and 1 <= p <= 65535]
        if kept:
            fixed["ports"] = kept
        else:
            del fixed["ports"]
    port = fixed.get("port")
    if isinstance(port, int) and not 1 <= port <= 65535:
        del fixed["port"]
    return fixed if ports(fixed) else None


def _replacements(
    name: str, index: int, endpoint: Data, bound: Data
) -> tuple[list[Data], str] | None:
    """What replaces a refused endpoint, and the sentence saying so; ``None`` when the
    validator accepts it."""
    problems = _violations(name, index, endpoint)
    if not problems:
        return None
    host = text(endpoint, "host")
    fixed = _valid_ports(endpoint)
    if fixed is None:
        return [], f"removed (host '{host}': no valid port)"
    if not _violations(name, index, fixed):
        return [fixed], f"host '{host}': invalid ports removed"
    if any(word in problem for problem in problems for word in _HOST_WORDS):
        hosts = _boundary_hosts(bound, ports(fixed))
        copies = []
        for new in hosts:
            copy = tree_copy(fixed)
            copy["host"] = new
            if not _violations(name, index, copy):
                copies.append(copy)
        if copies:
            listed = ", ".join(c["host"] for c in copies)
            return copies, f"host '{host}' -> the boundary's hosts on its ports: {listed}"
        return [], f"removed (host '{host}': the boundary has no host on its ports)"
    narrowed = _boundary_l7(fixed, bound)
    if narrowed is not None and not _violations(name, index, narrowed):
        return [narrowed], f"host '{host}': the boundary's L7 rules on it copied (it had none)"
    return [], f"removed (host '{host}': {problems[0]})"


def _boundary_l7(endpoint: Data, bound: Data) -> Data | None:
    """An L7 endpoint without ``rules`` or ``access`` (the runtime refuses it), given the
    ``access`` or ``rules`` of the boundary's endpoint on the same host and protocol with
    a shared port; ``None`` when there is none (or the endpoint has rules already)."""
    if endpoint.get("rules") or endpoint.get("access"):
        return None
    host, protocol = text(endpoint, "host"), text(endpoint, "protocol")
    rules = _section(bound, "network_policies")
    for rule in rules.values():
        endpoints = rule.get("endpoints") if isinstance(rule, dict) else None
        for other in endpoints if isinstance(endpoints, list) else []:
            if not isinstance(other, dict) or text(other, "host") != host:
                continue
            if text(other, "protocol") != protocol or not set(ports(other)) & set(ports(endpoint)):
                continue
            for grant in ("access", "rules"):
                if other.get(grant):
                    copy = tree_copy(endpoint)
                    copy.pop("rules", None)
                    copy[grant] = tree_copy(other[grant])
                    return copy
    return None


def _repair_network(data: Data, bound: Data, repair: Repair) -> None:
    rules = _section(data, "network_policies")
    for key in list(rules):
        rule = rules[key]
        endpoints = rule.get("endpoints") if isinstance(rule, dict) else None
        if not isinstance(endpoints, list):
            continue
        name = text(rule, "name") or key
        had_endpoints = bool(endpoints)
        position = 0
        for original, endpoint in enumerate(list(endpoints)):
            location: Location = ("network_policies", key, "endpoints", position)
            found = (
                _replacements(name, original, endpoint, bound)
                if isinstance(endpoint, dict)
                else None
            )
            if found is None:
                position += 1
                continue
            copies, sentence = found
            remove_value(data, location, repair.edits)
            for offset, copy in enumerate(copies):
                edit = Edit("add", (*location[:-1], position + offset), new=copy, origin=location)
                apply_edit(data, edit)
                repair.edits.append(edit)
            position += len(copies)
            named = render_path(("network_policies", key, "endpoints", original))
            repair.notes.append(f"{named} {sentence}")
        if had_endpoints and not rule["endpoints"]:
            remove_value(data, ("network_policies", key), repair.edits)
            repair.notes.append(
                f"{render_path(('network_policies', key))} removed (no endpoint the runtime "
                "runs was left)"
            )


def _repair_ambiguities(data: Data, repair: Repair, checkpoint: Callable[[], None] | None) -> None:
    """Endpoints the runtime finds ambiguous (two overlapping endpoints with conflicting
    metadata): the later one of each pair, in rule-key order, is removed and named with
    the one kept (which the author meant cannot be known; a host repair's copy is the
    later one beside an endpoint the author wrote for that host)."""
    rules = _section(data, "network_policies")
    limit = sum(
        len(rule["endpoints"])
        for rule in rules.values()
        if isinstance(rule, dict) and isinstance(rule.get("endpoints"), list)
    )
    for _ in range(limit):
        try:
            read = policy_data(dump_text(data), checkpoint)
        except PolicyLoadError:
            return
        pairs = ambiguous_pairs(read, checkpoint) if isinstance(read, dict) else []
        if not pairs:
            return
        (kept_key, kept_index), (key, index), message = pairs[0]
        kept: Location = ("network_policies", kept_key, "endpoints", kept_index)
        location: Location = ("network_policies", key, "endpoints", index)
        named = original_location(location, repair.edits, nearest=True) or location
        kept_named = original_location(kept, repair.edits, nearest=True) or kept
        remove_value(data, location, repair.edits)
        repair.notes.append(
            f"{render_path(named)} removed (ambiguous beside {render_path(kept_named)}, "
            f"which is kept: {message})"
        )
        if not rules[key]["endpoints"]:
            remove_value(data, ("network_policies", key), repair.edits)
            repair.notes.append(
                f"{render_path(('network_policies', key))} removed (no endpoint the runtime "
                "runs was left)"
            )

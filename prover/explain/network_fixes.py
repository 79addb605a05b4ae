"""Fix options for a network violation: narrow the granting entries into the closest
boundary entry, split a wildcard endpoint into the boundary's endpoints, or remove them.

Narrowing works dimension by dimension on the boundary entry's failing dimensions: the
host to the boundary's host (when the candidate's pattern contains it), ports to the
common ports, an L4 endpoint to an enforced REST endpoint with the boundary's rules, the
granting allow rule (or ``access`` preset) to its intersections with the boundary's allow
rules, ``allowed_ips`` to the boundary's, the boundary's deny rules added, and a binary
glob to the boundary binaries it covers. Every option is re-proved by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from prover.concrete import binary_matches, denying_entries, granting_entries, path_matches
from prover.explain.closest import Candidate, rule_mismatches
from prover.explain.document import (
    Data,
    Edit,
    Loaded,
    apply_edit,
    diff_mapping,
    get_at,
    remove_value,
    set_value,
    tree_copy,
)
from prover.explain.intersect import (
    authored_allow,
    host_contains,
    intersect_path,
    intersect_rules,
)
from prover.explain.locate import Grant, endpoint_location, rule_by_key
from prover.explain.options import Option, Rejection
from prover.policy.model import PRESET_METHODS, Endpoint, NetworkAction, Rule
from prover.policy.paths import render_path

#: How many boundary entries are tried as narrowing targets.
MAX_TARGETS = 3
_RULE_LEVEL = frozenset({"method", "path", "query"})


class NotNarrowable(Exception):
    """The entry cannot be narrowed into this boundary entry; the message says why."""


def _rule_level_fails(endpoint: Endpoint, action: NetworkAction, failing: frozenset[str]) -> bool:
    if not failing & _RULE_LEVEL or action.protocol != "rest":
        return False
    return all(rule_mismatches(rule, action) for rule in endpoint.allow_rules)


def _boundary_denials(boundary: Loaded, action: NetworkAction) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for entry in denying_entries(boundary.policy, action):
        location = (
            *endpoint_location(entry.rule_key, entry.endpoint_index),
            "deny_rules",
            entry.deny_rule_index,
        )
        matcher = tree_copy(get_at(boundary.data, location))
        if matcher not in found:
            found.append(matcher)
    return found


def _narrow_allow(new: dict[str, Any], ours: Endpoint, grant: Grant, target: Endpoint) -> None:
    """Narrow the granting allow rule or ``access`` preset to the boundary's rules."""
    if grant.allow_rule_index is not None:
        kept = intersect_rules((ours.allow_rule(grant.allow_rule_index),), target.allow_rules)
        if not kept:
            raise NotNarrowable("no request is allowed by both the rule and the boundary's rules")
        rules = list(new.get("rules", []))
        rules[grant.allow_rule_index : grant.allow_rule_index + 1] = [
            authored_allow(r) for r in kept
        ]
        new["rules"] = rules
        return
    kept = intersect_rules(ours.allow_rules, target.allow_rules)
    if not kept:
        raise NotNarrowable("no request is allowed by both the preset and the boundary's rules")
    if (
        target.access is not None
        and target.path in ("", "**", "/**")
        and set(PRESET_METHODS[target.access]) <= set(PRESET_METHODS[ours.access or "full"])
    ):
        new["access"] = target.access
        return
    new.pop("access", None)
    new["rules"] = [authored_allow(r) for r in kept]


def _to_rest(new: dict[str, Any], target_data: dict[str, Any]) -> None:
    """Turn an L4 endpoint into an enforced REST endpoint with the boundary's rules."""
    new["protocol"] = "rest"
    new["enforcement"] = "enforce"
    for key in ("path", "access", "rules", "deny_rules"):
        if key in target_data:
            new[key] = tree_copy(target_data[key])


def narrowed_endpoint(
    doc: Loaded,
    boundary: Loaded,
    grant: Grant,
    target: Candidate,
    action: NetworkAction,
    exact_hosts: list[tuple[str, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The granting endpoint narrowed into ``target`` on its failing dimensions.

    A wildcard host narrowed to the boundary's exact host is refused unless
    ``exact_hosts`` collects the (rule key, endpoint) the narrowing proof adds."""
    assert grant.rule_key is not None and grant.endpoint_index is not None
    failing = target.failing
    if "identity_mode" in failing:
        raise NotNarrowable("the boundary rule lists no binaries")
    ours = rule_by_key(doc, grant.rule_key).endpoints[grant.endpoint_index]
    theirs = target.endpoint
    new: dict[str, Any] = tree_copy(
        get_at(doc.data, endpoint_location(grant.rule_key, grant.endpoint_index))
    )
    target_data: dict[str, Any] = get_at(
        boundary.data, endpoint_location(target.rule.key, theirs.index)
    )
    if "host" in failing:
        if not host_contains(ours.host, theirs.host):
            raise NotNarrowable(f"host {theirs.host} is not inside {ours.host}")
        new["host"] = target_data["host"]
        if ours.host_is_wildcard and not theirs.host_is_wildcard and not ours.allowed_ips:
            if theirs.allowed_ips:
                new["allowed_ips"] = list(theirs.allowed_ips_raw)
            elif exact_hosts is None:
                raise NotNarrowable(
                    f"an exact host ({theirs.host}) also reaches private destination addresses, "
                    f"which the wildcard {ours.host} does not, so it would not only narrow"
                )
            else:
                # The exact host may also reach private addresses (the boundary allows
                # them): the narrowing proof compares with the wildcard endpoint as
                # written plus this exact host, and the verification says so.
                written = tree_copy(
                    get_at(doc.data, endpoint_location(grant.rule_key, grant.endpoint_index))
                )
                written["host"] = target_data["host"]
                exact_hosts.append((grant.rule_key, written))
    if "port" in failing:
        common = [p for p in ours.ports if p in theirs.ports]
        if not common or not new.get("ports"):
            raise NotNarrowable(f"no common port with {list(theirs.ports)}")
        new["ports"] = common
    if theirs.layer == "rest" and ours.layer == "l4":
        _to_rest(new, target_data)
    elif theirs.layer == "rest":
        if action.protocol == "rest" and not path_matches(theirs.path, action.path or ""):
            path = intersect_path(ours.path, theirs.path)
            if path is None:
                raise NotNarrowable(f"endpoint path {theirs.path} is not inside {ours.path}")
            new["path"] = path
        if _rule_level_fails(theirs, action, failing):
            _narrow_allow(new, ours, grant, theirs)
    if "destination_ip" in failing:
        if not theirs.allowed_ips:
            raise NotNarrowable("the boundary entry has no allowed_ips to copy")
        new["allowed_ips"] = list(theirs.allowed_ips_raw)
    if "deny_rule" in failing:
        if (new.get("protocol") or "").lower() != "rest":
            raise NotNarrowable("deny rules need a REST endpoint")
        denies = list(new.get("deny_rules", []))
        for matcher in _boundary_denials(boundary, action):
            if matcher not in denies:
                denies.append(matcher)
        new["deny_rules"] = denies
    return new


def _narrowed_binaries(rule: Rule, target_rule: Rule, action: NetworkAction) -> list[str] | None:
    names = [b for b in (action.binary, action.ancestor_binary) if b is not None]
    result: list[str] = []
    changed = False
    for glob in rule.binaries:
        if not any(binary_matches(glob, name) for name in names):
            result.append(glob)
            continue
        changed = True
        for theirs in target_rule.binaries:
            if (theirs == glob or binary_matches(glob, theirs)) and theirs not in result:
                result.append(theirs)
    return result if changed else None


def _binary_edits(
    data: Data,
    doc: Loaded,
    keys: list[str],
    target: Candidate,
    action: NetworkAction,
    edits: list[Edit],
) -> None:
    for key in keys:
        rule = rule_by_key(doc, key)
        binaries = _narrowed_binaries(rule, target.rule, action)
        if binaries is None:
            continue
        set_value(
            data, ("network_policies", key, "binaries"), [{"path": b} for b in binaries], edits
        )


def narrow_option(
    doc: Loaded, boundary: Loaded, grants: list[Grant], target: Candidate, action: NetworkAction
) -> Option:
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    endpoints: dict[tuple[str, int], dict[str, Any]] = {}
    exact_hosts: list[tuple[str, dict[str, Any]]] = []
    for grant in grants:
        assert grant.rule_key is not None and grant.endpoint_index is not None
        key = (grant.rule_key, grant.endpoint_index)
        if key in endpoints:
            raise NotNarrowable("two allow rules of one endpoint grant the action")
        endpoints[key] = narrowed_endpoint(doc, boundary, grant, target, action, exact_hosts)
    for (rule_key, index), new in endpoints.items():
        diff_mapping(data, endpoint_location(rule_key, index), new, edits)
    if "binary" in target.failing:
        keys = sorted({g.rule_key for g in grants if g.rule_key is not None})
        _binary_edits(data, doc, keys, target, action, edits)
    if not edits:
        raise NotNarrowable("nothing to narrow")
    where = render_path(endpoint_location(target.rule.key, target.endpoint.index))
    dims = ", ".join(sorted(target.failing))
    option = Option("narrow", f"narrow to the boundary entry {where} (on {dims})", edits, data)
    option.exact_hosts = exact_hosts
    return option


def split_option(
    doc: Loaded, boundary: Loaded, grant: Grant, targets: list[Candidate], action: NetworkAction
) -> Option | None:
    """Replace one endpoint by one narrowed copy per boundary entry it can be narrowed
    into (a wildcard host becomes the boundary's matching hosts)."""
    assert grant.rule_key is not None and grant.endpoint_index is not None
    copies: list[dict[str, Any]] = []
    for target in targets:
        if "binary" in target.failing or "identity_mode" in target.failing:
            continue
        try:
            new = narrowed_endpoint(doc, boundary, grant, target, action)
        except NotNarrowable:
            continue
        if new not in copies:
            copies.append(new)
    if len(copies) < 2:
        return None
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    location = endpoint_location(grant.rule_key, grant.endpoint_index)
    remove_value(data, location, edits)
    for offset, new in enumerate(copies):
        edit = Edit(
            "add", (*location[:-1], grant.endpoint_index + offset), new=new, origin=location
        )
        apply_edit(data, edit)
        edits.append(edit)
    return Option(
        "narrow",
        f"split {render_path(location)} into {len(copies)} endpoints inside the boundary's",
        edits,
        data,
    )


def drop_binaries_option(doc: Loaded, grants: list[Grant], action: NetworkAction) -> Option:
    """Drop only the binaries that match the action (as itself or as its ancestor) from
    each granting rule, keeping every other binary and every endpoint."""
    if not action.binary_identity_required:
        raise NotNarrowable("binary identity is not enforced for this action")
    names = [b for b in (action.binary, action.ancestor_binary) if b is not None]
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    dropped: list[str] = []
    for key in sorted({g.rule_key for g in grants if g.rule_key is not None}):
        location = ("network_policies", key, "binaries")
        entries = get_at(data, location)
        if not isinstance(entries, list):
            raise NotNarrowable(f"rule '{key}' lists no binaries")
        kept_positions = [
            i
            for i, entry in enumerate(entries)
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("path"), str)
                and any(binary_matches(entry["path"], name) for name in names)
            )
        ]
        if not kept_positions:
            raise NotNarrowable(f"every binary of rule '{key}' matches the action")
        for position in reversed(range(len(entries))):
            if position not in kept_positions:
                dropped.append(f"{entries[position]['path']} from '{key}'")
                remove_value(data, (*location, position), edits)
    if not edits:
        raise NotNarrowable("no listed binary matches the action")
    return Option("narrow", "drop only " + ", ".join(dropped), edits, data)


def removal_edits(doc: Loaded, data: Data, grants: list[Grant], edits: list[Edit]) -> str:
    """Remove the granting allow rules, or their endpoints when nothing else is left in
    them, or the whole rule when none of its endpoints is left. Returns a description."""
    by_endpoint: dict[tuple[str, int], set[int | None]] = {}
    for grant in grants:
        assert grant.rule_key is not None and grant.endpoint_index is not None
        by_endpoint.setdefault((grant.rule_key, grant.endpoint_index), set()).add(
            grant.allow_rule_index
        )
    whole: dict[str, list[int]] = {}
    partial: list[tuple[str, int, list[int]]] = []
    for (rule_key, index), allow in by_endpoint.items():
        rules = get_at(data, endpoint_location(rule_key, index)).get("rules") or []
        if None in allow or len(allow) >= len(rules):
            whole.setdefault(rule_key, []).append(index)
        else:
            positions = sorted((i for i in allow if i is not None), reverse=True)
            partial.append((rule_key, index, positions))
    removed: list[str] = []
    for rule_key, index, positions in partial:
        for position in positions:
            location = (*endpoint_location(rule_key, index), "rules", position)
            remove_value(data, location, edits)
            removed.append(render_path(location))
    for rule_key, indices in sorted(whole.items()):
        endpoints = get_at(data, ("network_policies", rule_key, "endpoints"))
        if len(indices) >= len(endpoints):
            remove_value(data, ("network_policies", rule_key), edits)
            removed.append(f"rule '{rule_key}' (none of its endpoints would be left)")
            continue
        for index in sorted(indices, reverse=True):
            remove_value(data, endpoint_location(rule_key, index), edits)
            removed.append(render_path(endpoint_location(rule_key, index)))
    return "remove " + ", ".join(removed)


def remove_option(doc: Loaded, grants: list[Grant]) -> Option:
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    description = removal_edits(doc, data, grants, edits)
    return Option("remove", description, edits, data)


def delete_rules(doc: Loaded, grants: list[Grant]) -> Data:
    """The candidate with the granting network rules deleted outright (for the measure)."""
    data: Data = tree_copy(doc.data)
    for key in {g.rule_key for g in grants if g.rule_key is not None}:
        del data["network_policies"][key]
    return data


def inspect_option(doc: Loaded, grants: list[Grant]) -> Option:
    """Drop ``tls: skip`` from the granting endpoints that name a protocol: the runtime
    then inspects their traffic by their rules instead of tunnelling it raw, which keeps
    every request those rules allow."""
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    places: list[str] = []
    slots = {(g.rule_key, g.endpoint_index) for g in grants}
    for key, index in sorted(s for s in slots if s[0] is not None and s[1] is not None):
        location = endpoint_location(key, index)
        endpoint = get_at(data, location)
        protocol = str(endpoint.get("protocol") or "").lower() if isinstance(endpoint, dict) else ""
        if protocol not in ("", "tcp") and endpoint.get("tls") == "skip":
            remove_value(data, (*location, "tls"), edits)
            places.append(render_path(location))
    if not edits:
        raise NotNarrowable("no granting endpoint with a protocol skips TLS inspection")
    return Option("narrow", "inspect " + ", ".join(places) + " (drop tls: skip)", edits, data)


def _needed(
    doc: Loaded, boundary: Loaded, grants: list[Grant], needs: Sequence[NetworkAction]
) -> set[tuple[str, int]]:
    """The boundary endpoints that grant a need which a granting endpoint grants too:
    narrowing into one of them keeps that need."""
    granting = {(g.rule_key, g.endpoint_index) for g in grants}
    found: set[tuple[str, int]] = set()
    for need in needs:
        ours = {(e.rule_key, e.endpoint_index) for e in granting_entries(doc.policy, need)}
        if ours & granting:
            found.update(
                (e.rule_key, e.endpoint_index) for e in granting_entries(boundary.policy, need)
            )
    return found


def _narrowing_targets(
    doc: Loaded,
    grants: list[Grant],
    candidates: list[Candidate],
    needed: AbstractSet[tuple[str, int]] = frozenset(),
) -> list[Candidate]:
    """The boundary entries to narrow into: the closest ones, but first those that grant
    a need the granting endpoints grant, then those failing on the host alone when that
    host lies inside a granting endpoint's (a wildcard narrows to it), which the
    closeness order ranks no nearer than any other host."""
    patterns = [
        rule_by_key(doc, g.rule_key).endpoints[g.endpoint_index].host
        for g in grants
        if g.rule_key is not None and g.endpoint_index is not None
    ]

    def inside(candidate: Candidate) -> bool:
        host = candidate.endpoint.host
        return candidate.failing == frozenset({"host"}) and any(
            host_contains(pattern, host) for pattern in patterns
        )

    def key(candidate: Candidate) -> tuple[bool, bool]:
        slot = (candidate.rule.key, candidate.endpoint.index)
        return (slot not in needed, not inside(candidate))

    ordered = sorted(candidates, key=key)  # stable: closest first within each group
    keeping = sum(1 for c in ordered if not key(c)[0])
    return ordered[: max(MAX_TARGETS, min(keeping, 2 * MAX_TARGETS))]


def network_options(
    doc: Loaded,
    boundary: Loaded,
    grants: list[Grant],
    candidates: list[Candidate],
    action: NetworkAction,
    needs: Sequence[NetworkAction] = (),
) -> tuple[list[Option], list[Rejection]]:
    """Fix options, most preferred first (the caller re-orders by what they keep and
    drops those that lose a need); ``needs`` put the boundary entries that keep them
    first among the narrowing targets."""
    options: list[Option] = []
    rejected: list[Rejection] = []
    if not grants:
        return options, rejected
    if any(g.endpoint_index is None for g in grants):
        # Rules reaching the action through an opaque endpoint: only their binaries can
        # be narrowed here (the boundary check then decides the rest).
        try:
            options.append(drop_binaries_option(doc, grants, action))
        except NotNarrowable as exc:
            rejected.append(Rejection("drop only the action's binary", str(exc)))
        return options, rejected
    needed = _needed(doc, boundary, grants, needs) if needs else set()
    targets = _narrowing_targets(doc, grants, candidates, needed)
    try:  # first: among fixes that keep as much, the smallest edit wins
        options.append(drop_binaries_option(doc, grants, action))
    except NotNarrowable:
        pass
    try:
        options.append(inspect_option(doc, grants))
    except NotNarrowable:
        pass
    if len(grants) == 1:
        split = split_option(doc, boundary, grants[0], candidates, action)
        if split is not None:
            options.append(split)
    for position, target in enumerate(targets):
        where = render_path(endpoint_location(target.rule.key, target.endpoint.index))
        try:
            options.append(narrow_option(doc, boundary, grants, target, action))
        except NotNarrowable as exc:
            if position == 0:  # only the closest entry's reason is worth reading
                rejected.append(Rejection(f"narrow to the boundary entry {where}", str(exc)))
    options.append(remove_option(doc, grants))
    return options, rejected

"""Fix options for filesystem, process and Landlock violations, and the edits that get
past the ``unsupported`` results a fix can meet on its way (process identities that the
prover cannot order, filesystem paths it cannot compare, an unresolved workdir).
"""

from __future__ import annotations

from prover.concrete import IdentityChange, compare_identity
from prover.concrete.filesystem import path_is_covered, readable_paths
from prover.explain.document import (
    Data,
    Edit,
    Loaded,
    filesystem_key,
    get_at,
    remove_value,
    set_value,
    tree_copy,
)
from prover.explain.locate import Grant
from prover.explain.options import Option
from prover.policy.model import Policy
from prover.results import (
    FilesystemCounterexample,
    LandlockCounterexample,
    ProcessCounterexample,
)
from prover.runtime.baseline import PROXY_READ_WRITE

PROCESS_FIELDS = ("run_as_user", "run_as_group")


def _move_to_read_only(data: Data, index: int, edits: list[Edit]) -> None:
    key = filesystem_key(data)
    value = get_at(data, (key, "read_write", index))
    remove_value(data, (key, "read_write", index), edits)
    section = data[key]
    read_only = section.get("read_only")
    if read_only is None:
        set_value(data, (key, "read_only"), [value], edits)
    elif value not in read_only:
        origin = (key, "read_write", index)
        edit = Edit("add", (key, "read_only", len(read_only)), new=value, origin=origin)
        read_only.append(value)
        edits.append(edit)


def _filesystem_edits(
    doc: Loaded, boundary: Policy, grants: list[Grant], narrow: bool
) -> tuple[Data, list[Edit], bool]:
    """Remove the granting entries, or (``narrow``) move read-write entries the boundary
    reads to read_only. Returns the document, the edits and whether anything moved."""
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    moved = False
    readable = frozenset(readable_paths(boundary))
    ordered = sorted(grants, key=lambda g: (g.fs_list or "", -(g.fs_index or 0)))
    for grant in ordered:
        assert grant.fs_list is not None and grant.fs_index is not None
        entry = get_at(data, grant.location)
        if narrow and grant.fs_list == "read_write" and path_is_covered(entry, readable):
            _move_to_read_only(data, grant.fs_index, edits)
            moved = True
        else:
            remove_value(data, grant.location, edits)
    return data, edits, moved


def filesystem_options(
    doc: Loaded, boundary: Policy, grants: list[Grant], cex: FilesystemCounterexample
) -> list[Option]:
    options: list[Option] = []
    if cex.access == "write" and not grants and cex.path in PROXY_READ_WRITE:
        # No entry grants it: the runtime's proxy baseline does (lib.rs
        # enrich_proto_baseline_paths), unless the policy lists the path read-only.
        listed = _baseline_read_only_option(doc, cex.path)
        if listed is not None:
            options.append(listed)
    if cex.access == "write":
        data, edits, moved = _filesystem_edits(doc, boundary, grants, narrow=True)
        if moved:
            options.append(
                Option("narrow", f"make {cex.path} read-only, as the boundary has it", edits, data)
            )
    sub = _subdirectory_option(doc, boundary, grants, cex)
    if sub is not None:
        options.append(sub)
    data, edits, _ = _filesystem_edits(doc, boundary, grants, narrow=False)
    if not _lists_left(data):
        # Both lists empty: the runtime builds no Landlock ruleset at all (landlock.rs,
        # prepare_with_path_open_mode), so give the candidate the boundary's paths.
        adopted = _boundary_paths_option(doc, boundary)
        if adopted is not None:
            options.append(adopted)
    options.append(Option("remove", f"remove {cex.path} from the candidate", edits, data))
    return options


def _baseline_read_only_option(doc: Loaded, path: str) -> Option | None:
    """The candidate with ``path`` listed read-only, so that the runtime adds no
    writable ``path`` of its proxy baseline."""
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    name = filesystem_key(data)
    section = data.get(name)
    if section is None:
        # An absent section includes the workdir: keep that when adding one.
        set_value(data, (name,), {"include_workdir": True}, edits)
        section = data[name]
    if not isinstance(section, dict):
        return None
    listed = section.get("read_only")
    if listed is None:
        set_value(data, (name, "read_only"), [path], edits)
    else:
        edits.append(Edit("add", (name, "read_only", len(listed)), new=path))
        listed.append(path)
    return Option(
        "narrow",
        f"list {path} read-only: the runtime adds a writable {path} to a policy with network "
        "rules unless the policy lists it",
        edits,
        data,
    )


def _lists_left(data: Data) -> bool:
    """Whether the document keeps a filesystem path, or its workdir, for Landlock."""
    section = data.get(filesystem_key(data))
    if section is None:
        return True  # an absent section includes the workdir
    if not isinstance(section, dict):
        return True
    return bool(
        section.get("read_only") or section.get("read_write") or section.get("include_workdir")
    )


def _boundary_paths_option(doc: Loaded, boundary: Policy) -> Option | None:
    """The candidate with the boundary's filesystem lists, where it has any."""
    fs = boundary.filesystem
    if not fs.read_only and not fs.read_write:
        return None
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    name = filesystem_key(data)
    section = data.get(name)
    if not isinstance(section, dict):
        set_value(data, (name,), {}, edits)
    for key, paths in (("read_only", fs.read_only), ("read_write", fs.read_write)):
        if paths:
            set_value(data, (name, key), list(paths), edits)
    return Option(
        "narrow",
        "give the candidate the boundary's filesystem paths (with both lists empty the "
        "runtime builds no Landlock ruleset)",
        edits,
        data,
    )


def _subdirectory_option(
    doc: Loaded, boundary: Policy, grants: list[Grant], cex: FilesystemCounterexample
) -> Option | None:
    """Replace the granting entries by the boundary's entries beneath the path (of the
    access kind); a writable entry the boundary reads stays, read-only (a write beneath
    it needs the boundary's writable entry, a read anywhere in it does not). Only
    environment evidence lets the prover show that this narrows the candidate, so
    without it the option is rejected and removal is offered instead."""
    fs = boundary.filesystem
    entries = fs.read_write if cex.access == "write" else (*fs.read_only, *fs.read_write)
    prefix = cex.path.rstrip("/") + "/"
    beneath = [e for e in dict.fromkeys(entries) if e.startswith(prefix)]
    if not beneath:
        return None
    data, edits, moved = _filesystem_edits(doc, boundary, grants, narrow=cex.access == "write")
    key = "read_write" if cex.access == "write" else "read_only"
    name = filesystem_key(data)
    section = data.get(name)
    if not isinstance(section, dict):
        return None
    listed = section.get(key)
    for entry in beneath:
        if listed is None:
            set_value(data, (name, key), [entry], edits)
            listed = section[key]
        elif entry not in listed:
            edit = Edit("add", (name, key, len(listed)), new=entry)
            listed.append(entry)
            edits.append(edit)
    shown = ", ".join(beneath[:3]) + (" ..." if len(beneath) > 3 else "")
    kept = f" and keep {cex.path} read-only" if moved else ""
    return Option(
        "narrow", f"narrow {cex.path} to the boundary's {shown} beneath it{kept}", edits, data
    )


def process_option(doc: Loaded, cex: ProcessCounterexample) -> Option:
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    set_value(data, ("process", cex.field), cex.boundary, edits)
    return Option(
        "narrow",
        f"run as the boundary's {cex.field} '{cex.boundary}' instead of root",
        edits,
        data,
    )


def landlock_option(doc: Loaded, cex: LandlockCounterexample) -> Option:
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    set_value(data, ("landlock", "compatibility"), cex.boundary, edits)
    return Option(
        "narrow", f"require Landlock (compatibility: {cex.boundary}) like the boundary", edits, data
    )


# ---------------------------------------------------------------------------------------
# Blockers met on the way


def process_alignment(doc: Loaded, boundary: Policy) -> Option | None:
    """Set every process identity the prover cannot compare to the boundary's value."""
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    for field in PROCESS_FIELDS:
        ours, theirs = getattr(doc.policy, field), getattr(boundary, field)
        if compare_identity(theirs, ours) is not IdentityChange.UNRESOLVED:
            continue
        if theirs:
            set_value(data, ("process", field), theirs, edits)
        else:
            remove_value(data, ("process", field), edits)
    if not edits:
        return None
    return Option(
        "align",
        "use exactly the boundary's process identity (the prover cannot compare identities "
        "that differ)",
        edits,
        data,
    )


def filesystem_alignment(doc: Loaded, boundary: Policy) -> Option | None:
    """Drop (or make read-only) every candidate path the boundary does not list exactly."""
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    name = filesystem_key(data)
    section = data.get(name)
    if not isinstance(section, dict):
        return None
    writes = boundary.filesystem.read_write
    reads = boundary.filesystem.read_only + writes
    dropped: list[str] = []
    demoted: list[str] = []
    # read_only first: moving a read_write entry appends to read_only.
    for index in reversed(range(len(section.get("read_only") or []))):
        path = doc.policy.filesystem.read_only[index]
        if not path_is_covered(path, reads):
            remove_value(data, (name, "read_only", index), edits)
            dropped.append(path)
    for index in reversed(range(len(section.get("read_write") or []))):
        path = doc.policy.filesystem.read_write[index]
        if path_is_covered(path, writes):
            continue
        if path_is_covered(path, reads):
            _move_to_read_only(data, index, edits)
            demoted.append(path)
        else:
            remove_value(data, (name, "read_write", index), edits)
            dropped.append(path)
    if not edits:
        return None
    parts = []
    if demoted:
        listed = ", ".join(sorted(set(demoted)))
        parts.append(f"make {listed} read-only (the boundary lists it for reading only)")
    if dropped:
        listed = ", ".join(sorted(set(dropped)))
        parts.append(f"drop {listed}, which the boundary does not list exactly")
    return Option(
        "align",
        " and ".join(parts) + "; the prover compares filesystem paths exactly",
        edits,
        data,
    )


def workdir_alignment(doc: Loaded) -> Option | None:
    """Stop including the image's working directory (an unresolved path)."""
    if not doc.policy.filesystem.include_workdir:
        return None
    data: Data = tree_copy(doc.data)
    edits: list[Edit] = []
    set_value(data, (filesystem_key(data), "include_workdir"), False, edits)
    return Option(
        "align",
        "stop including the image's working directory, which the prover cannot resolve",
        edits,
        data,
    )

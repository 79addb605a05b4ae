"""The filesystem the sandbox enforces: baseline enrichment, the workdir and Landlock on/off.

Runtime facts (NVIDIA/OpenShell, ``crates/``):

* ``openshell-sandbox/src/lib.rs``, ``enrich_proto_baseline_paths_with``: with network
  rules (proxy mode) or a GPU, each baseline path is added unless the policy lists it
  (read-only: in either list; read-write: in ``read_write``, and skipped when listed
  read-only, except ``/proc``, which a GPU promotes to read-write); a path missing
  from the image is skipped. User paths are never removed.
* ``openshell-supervisor-process/src/sandbox/linux/landlock.rs``,
  ``prepare_with_path_open_mode``: the workdir is appended read-write under
  ``include_workdir``; **when both lists are then empty no ruleset is built at all**;
  under ``best_effort`` a path that cannot be opened is skipped (``try_open_path``) and
  when none opens the sandbox runs without Landlock too.

Both policies are judged in the same sandbox environment (image, GPU, driver): a path
missing from the image is missing for both, and a Landlock rule on a missing path grants
nothing, so reading every baseline path as present on both sides decides containment for
every path that exists. Only the Landlock-off consequence of missing paths is not
symmetric; it is read per side: the candidate *may* run without Landlock when no path it
lists surely exists (``best_effort``), the boundary only when it surely does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from prover.policy.model import Filesystem
from prover.runtime.baseline import ALWAYS_PRESENT, FHS_PRESENT, GPU_DEVICE_NODE, enrichment_paths

#: The filesystem of a sandbox without a Landlock ruleset: every path, read-write.
UNRESTRICTED = Filesystem(include_workdir=False, read_only=(), read_write=("/",))

#: Whether a path exists in the image: True, False, or None when nothing says.
Exists = Callable[[str], bool | None]


class EffectiveFilesystem(NamedTuple):
    """One policy's filesystem as the runtime enforces it, bounded both ways.

    ``assumed``: every baseline path the image may have read as added, and no Landlock
    only where surely none is built: what the runtime grants in the environment where
    every path it may add exists. ``sure``: at most what it surely grants (only baseline
    paths known to exist). ``may_be_off``: under ``best_effort`` the sandbox may run
    without Landlock, since no listed path surely exists. ``facts``: the runtime facts
    the reading relied on, in words.
    """

    assumed: Filesystem
    sure: Filesystem
    may_be_off: bool
    facts: tuple[str, ...]
    #: ``hard_requirement`` and a listed path missing: ``try_open_path`` fails and the
    #: sandbox does not start (None: a listed path may be missing, nothing says).
    starts: bool | None = True
    missing: str | None = None

    @property
    def may(self) -> Filesystem:
        """At least what the sandbox may grant."""
        return UNRESTRICTED if self.may_be_off else self.assumed

    def listed(self) -> tuple[str, ...]:
        return (*self.assumed.read_only, *self.assumed.read_write)


def device_nodes(*filesystems: Filesystem) -> tuple[str, ...]:
    """The per-GPU device nodes (``/dev/nvidia0``, ...) that either policy names: the
    others are added alike to both sides, so only these can make the two differ."""
    named = {
        p
        for fs in filesystems
        for p in (*fs.read_only, *fs.read_write)
        if GPU_DEVICE_NODE.fullmatch(p)
    }
    return tuple(sorted(named))


def _enrich(
    fs: Filesystem, ro_add: tuple[str, ...], rw_add: tuple[str, ...], present: Callable[[str], bool]
) -> tuple[Filesystem, list[str], list[str]]:
    """``enrich_proto_baseline_paths_with`` on one policy; the paths it added."""
    read_only, read_write = list(fs.read_only), list(fs.read_write)
    added_ro: list[str] = []
    added_rw: list[str] = []
    for path in ro_add:
        if path not in read_only and path not in read_write and present(path):
            read_only.append(path)
            added_ro.append(path)
    for path in rw_add:
        if path in read_write or not present(path):
            continue
        if path in read_only and path not in fs.loose_read_only:
            if path == "/proc":  # the GPU promotion of a listed /proc
                read_only = [p for p in read_only if p != path]
                read_write.append(path)
                added_rw.append(path)
            continue
        read_write.append(path)
        added_rw.append(path)
    enriched = Filesystem(fs.include_workdir, tuple(read_only), tuple(read_write))
    return enriched, added_ro, added_rw


def _landlock_off(fs: Filesystem) -> bool:
    """``prepare_with_path_open_mode``: no ruleset when both lists are empty after the
    workdir (which always exists: it is the sandbox's working directory) is added."""
    return not fs.include_workdir and not fs.read_only and not fs.read_write


def effective_filesystem(
    fs: Filesystem,
    *,
    compatibility: str,
    proxy: bool,
    gpu: bool,
    exists: Exists,
    nodes: tuple[str, ...] = (),
) -> EffectiveFilesystem:
    """The filesystem the runtime enforces for a policy with filesystem section ``fs``
    (``proxy``: the policy has network rules; ``gpu``: the sandbox has a GPU)."""
    ro_add, rw_add = enrichment_paths(proxy=proxy, gpu=gpu, device_nodes=nodes)

    def maybe(path: str) -> bool:
        return exists(path) is not False

    def surely(path: str) -> bool:
        return path in ALWAYS_PRESENT or exists(path) is True

    assumed, added_ro, added_rw = _enrich(fs, ro_add, rw_add, maybe)
    sure, _, _ = _enrich(fs, ro_add, rw_add, surely)
    facts: list[str] = []
    if added_ro or added_rw:
        why = " and ".join(w for w, on in (("network rules", proxy), ("a GPU", gpu)) if on)
        lists = [f"{k} {', '.join(v)}" for k, v in (("ro", added_ro), ("rw", added_rw)) if v]
        facts.append(f"baseline paths added for {why}: {'; '.join(lists)} (where in the image)")
    if _landlock_off(assumed):
        facts.append(
            "Landlock is off: both filesystem lists are empty (and no workdir), so no "
            "ruleset is built and only Unix permissions apply"
        )
        return EffectiveFilesystem(UNRESTRICTED, UNRESTRICTED, False, tuple(facts))
    listed = (*assumed.read_only, *assumed.read_write)
    on = compatibility == "hard_requirement" or assumed.include_workdir
    if not on and all(exists(p) is False for p in listed):
        # try_open_path skips each; with no rule applied best_effort builds none.
        facts.append(
            "Landlock is off: none of the listed paths exists in the image, and "
            "best_effort builds no ruleset then"
        )
        return EffectiveFilesystem(UNRESTRICTED, UNRESTRICTED, False, tuple(facts))
    if not on and not any(surely(p) for p in listed):
        usual = sorted(p for p in listed if p in FHS_PRESENT and exists(p) is None)
        if usual:
            on = True
            facts.append(
                f"assumed: {usual[0]} exists in the image (best_effort runs without Landlock "
                "when no listed path exists)"
            )
    may_be_off = not on and not any(surely(p) for p in listed)
    starts: bool | None = True
    missing = None
    if compatibility == "hard_requirement":
        user_paths = (*fs.read_only, *fs.read_write)
        missing = next((p for p in user_paths if exists(p) is False), None)
        if missing is not None:
            starts = False
            facts.append(
                f"{missing} does not exist in the image: under hard_requirement the "
                "sandbox does not start"
            )
        elif not all(surely(p) for p in user_paths):  # declared where a verdict uses it
            starts = None
    else:
        # try_open_path skips a missing path under best_effort: it grants nothing.
        assumed, sure = _present(assumed, exists), _present(sure, exists)
    return EffectiveFilesystem(assumed, sure, may_be_off, tuple(facts), starts, missing)


def _present(fs: Filesystem, exists: Exists) -> Filesystem:
    """``fs`` without the paths known to be missing from the image."""
    if not any(exists(p) is False for p in (*fs.read_only, *fs.read_write)):
        return fs
    return Filesystem(
        fs.include_workdir,
        tuple(p for p in fs.read_only if exists(p) is not False),
        tuple(p for p in fs.read_write if exists(p) is not False),
    )

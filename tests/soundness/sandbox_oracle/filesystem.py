"""The filesystem the sandboxed process gets: baseline enrichment, then Landlock.

1. ``enrich_proto_baseline_paths`` / ``enrich_proto_baseline_paths_with`` /
   ``collect_baseline_enrichment_paths`` (``openshell-sandbox/src/lib.rs``): a policy
   with network rules (proxy mode) gains ``PROXY_BASELINE_READ_ONLY`` and
   ``PROXY_BASELINE_READ_WRITE``; a sandbox whose image has ``/dev/nvidiactl`` or
   ``/dev/dxg`` (``has_gpu_devices``) gains the GPU lists and every ``/dev/nvidiaN``
   (``enumerate_gpu_device_nodes``). A path is added only when the policy does not list
   it (string comparison on the proto's text), only when it exists in the image; a
   read-write baseline path the policy lists read-only is skipped, except ``/proc``,
   which is promoted. A policy without a filesystem section gets one with
   ``include_workdir: true`` when anything is added.
2. ``TryFrom<ProtoSandboxPolicy> for SandboxPolicy`` (``openshell-core/src/policy.rs``):
   an absent section is ``FilesystemPolicy::default()`` (``include_workdir: true``),
   paths pass through ``normalize_path`` (``openshell-core/src/paths.rs``), and
   ``compatibility`` is hard only when it is exactly ``hard_requirement``.
3. ``prepare_with_path_open_mode`` (``openshell-supervisor-process/src/sandbox/linux/
   landlock.rs``): the workdir is appended read-write under ``include_workdir``; both
   lists empty: no ruleset at all. A kernel without Landlock: best effort runs
   unrestricted, hard requirement does not start. ``try_open_path``: a path that cannot
   be opened is skipped under best effort (and always in current-user mode), fatal under
   hard requirement; zero rules opened: unrestricted under best effort, fatal under hard.
   ``PathFd::new`` follows symlinks, so a rule binds the inode the path resolves to;
   ``access_for_path_fd`` limits a rule on a non-directory to that file.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.soundness.sandbox_oracle.image import Image, is_beneath, parts
from tests.soundness.sandbox_oracle.policy import Policy

PROXY_BASELINE_READ_ONLY = ("/usr", "/lib", "/etc", "/app", "/var/log", "/proc", "/dev/urandom")
PROXY_BASELINE_READ_WRITE = ("/tmp",)
GPU_BASELINE_READ_ONLY = ("/run/nvidia-persistenced", "/usr/lib/wsl")
GPU_BASELINE_READ_WRITE = (
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
    "/dev/dxg",
    "/proc",
)


class SandboxDoesNotStart(Exception):
    """The supervisor aborts: the sandbox runs nothing."""


def has_gpu_devices(image: Image) -> bool:
    return image.exists("/dev/nvidiactl") or image.exists("/dev/dxg")


def gpu_device_nodes(image: Image) -> list[str]:
    """``enumerate_gpu_device_nodes``: ``/dev/nvidia`` followed by digits only."""
    found = []
    for path in sorted({*image.files, *image.dirs, *image.symlinks}):
        head, _, name = path.rpartition("/")
        suffix = name.removeprefix("nvidia")
        if head == "/dev" and name.startswith("nvidia") and suffix.isdigit() and suffix.isascii():
            found.append(path)
    return found


def baseline_paths(proxy: bool, image: Image) -> tuple[list[str], list[str]]:
    """``active_baseline_enrichment_paths`` / ``collect_baseline_enrichment_paths``."""
    ro: list[str] = []
    rw: list[str] = []

    def push(into: list[str], path: str) -> None:
        if path not in into:
            into.append(path)

    if proxy:
        for path in PROXY_BASELINE_READ_ONLY:
            push(ro, path)
        for path in PROXY_BASELINE_READ_WRITE:
            push(rw, path)
    if has_gpu_devices(image):
        for path in GPU_BASELINE_READ_ONLY:
            push(ro, path)
        for path in (*GPU_BASELINE_READ_WRITE, *gpu_device_nodes(image)):
            push(rw, path)
    return [p for p in ro if p not in rw], rw


def enriched_filesystem(policy: Policy, image: Image) -> tuple[bool, list[str], list[str]] | None:
    """The proto filesystem section after ``enrich_proto_baseline_paths`` (None: absent)."""
    ro, rw = baseline_paths(bool(policy.rules), image)
    if not ro and not rw:
        if policy.filesystem is None:
            return None
        include, read_only, read_write = policy.filesystem
        return include, list(read_only), list(read_write)
    include, read_only, read_write = policy.filesystem or (True, (), ())
    fs_ro, fs_rw = list(read_only), list(read_write)
    for path in ro:
        if path not in fs_ro and path not in fs_rw:
            if image.exists(path):
                fs_ro.append(path)
    for path in rw:
        if path in fs_rw or not image.exists(path):
            continue
        if path in fs_ro:
            if path == "/proc":
                fs_ro = [p for p in fs_ro if p != path]
                fs_rw.append(path)
            continue
        fs_rw.append(path)
    return include, fs_ro, fs_rw


def normalize_path(path: str) -> str:
    """``normalize_path`` (lexical: separators collapsed, ``.`` dropped, ``..`` kept)."""
    body = "/".join(p for p in parts(path))
    return ("/" + body) if path.startswith("/") else body


@dataclass(frozen=True)
class Landlock:
    """The ruleset applied; ``rules`` None means no Landlock at all (Unix permissions
    only). Each rule is ``(physical path, is_dir, writable)``."""

    rules: tuple[tuple[str, bool, bool], ...] | None
    why: str

    def allows(self, image: Image, access: str, path: str) -> bool:
        """May the sandboxed process ``read`` or ``write`` ``path``? A write to a
        missing path creates it in its (resolved) parent directory."""
        target = image.resolve(path)
        creating = False
        if target is None:
            if access != "write":
                return False
            target = image.create_target(path)
            if target is None:
                return False
            creating = True
        if self.rules is None:
            return True
        for root, is_dir, writable in self.rules:
            if access == "write" and not writable:
                continue
            if is_dir:
                where = (target.rsplit("/", 1)[0] or "/") if creating else target
                if is_beneath(where, root):
                    return True
            elif not creating and target == root:
                return True
        return False


def effective_lists(
    policy: Policy, image: Image, enrich: bool = True
) -> tuple[list[str], list[str], bool]:
    """(read-only, read-write, hard requirement) as ``prepare_with_path_open_mode``
    receives and extends them (the workdir appended). ``enrich`` False: the policy
    replaced the enriched one (``restrictive_default_policy`` after the engine failed)."""
    if enrich:
        fs = enriched_filesystem(policy, image)
    else:
        fs = (
            None
            if policy.filesystem is None
            else (policy.filesystem[0], list(policy.filesystem[1]), list(policy.filesystem[2]))
        )
    include, read_only, read_write = fs if fs is not None else (True, [], [])
    read_only = [normalize_path(p) for p in read_only]
    read_write = [normalize_path(p) for p in read_write]
    if include and image.workdir is not None and normalize_path(image.workdir) not in read_write:
        read_write.append(image.workdir)
    return read_only, read_write, policy.landlock == "hard_requirement"


def landlock_for(
    policy: Policy,
    image: Image,
    kernel_landlock: bool,
    current_user_mode: bool = False,
    enrich: bool = True,
) -> Landlock:
    """Raises :class:`SandboxDoesNotStart` where the supervisor aborts."""
    read_only, read_write, hard = effective_lists(policy, image, enrich)
    if not read_only and not read_write:
        return Landlock(None, "no Landlock: both filesystem lists are empty")
    if not kernel_landlock:
        if hard:
            raise SandboxDoesNotStart("Landlock unavailable in hard_requirement mode")
        return Landlock(None, "no Landlock: the kernel lacks it (best effort)")
    rules = []
    for paths, writable in ((read_only, False), (read_write, True)):
        for path in paths:
            physical = image.resolve(path)
            if physical is None:
                if hard and not current_user_mode:
                    raise SandboxDoesNotStart(f"Landlock path {path} cannot be opened")
                continue
            rules.append((physical, image.is_dir(physical), writable))
    if not rules:
        if hard:
            raise SandboxDoesNotStart("Landlock ruleset has zero valid paths")
        return Landlock(None, "no Landlock: no listed path could be opened (best effort)")
    return Landlock(tuple(rules), "Landlock on")

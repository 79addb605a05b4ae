"""A sandbox image as the runtime meets it: its tree, accounts, USER, workdir and driver.

Path resolution follows the kernel's (every component, symlinks followed, relative
targets against the link's directory, at most 40 links as Linux's ``SYMLOOP_MAX``):
Landlock rules attach to the inode a path opens (``PathFd::new`` in
``openshell-supervisor-process/src/sandbox/linux/landlock.rs``, ``try_open_path``), and
a process's ``/proc/<pid>/exe`` is the canonical path of the file it runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SYMLOOP_MAX = 40
DRIVERS = ("docker", "podman", "kubernetes", "openshift", "vm")


def parts(path: str) -> list[str]:
    """The components of an absolute path; ``.`` and empty ones dropped (lexical)."""
    return [p for p in path.split("/") if p not in ("", ".")]


def join(base: str, name: str) -> str:
    return "/" + name if base == "/" else f"{base}/{name}"


def parent(path: str) -> str:
    head = path.rsplit("/", 1)[0]
    return head or "/"


def is_beneath(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both canonical)."""
    return root == "/" or path == root or path.startswith(root + "/")


@dataclass(frozen=True)
class Image:
    """What the oracle knows about the image. ``files`` and ``dirs`` are canonical
    (physical) paths; ``symlinks`` maps a physical link path to its stored target;
    ``passwd`` maps a user name to ``(uid, primary gid)`` as ``/etc/passwd`` lists it;
    ``groups`` maps a group name to its gid as ``/etc/group`` does. ``user`` is the OCI
    ``USER`` declaration (``name``, ``uid`` or ``user:group``); ``driver_ids`` the
    ``(uid, gid)`` a Kubernetes or OpenShift driver supplies."""

    files: frozenset[str] = frozenset()
    dirs: frozenset[str] = frozenset()
    symlinks: dict[str, str] = field(default_factory=dict)
    passwd: dict[str, tuple[int, int]] = field(default_factory=dict)
    groups: dict[str, int] = field(default_factory=dict)
    user: str | None = "sandbox"
    workdir: str | None = "/sandbox"
    driver: str = "docker"
    driver_ids: tuple[int, int] = (1000, 1000)

    def __post_init__(self) -> None:
        if self.driver not in DRIVERS:
            raise ValueError(f"unknown driver {self.driver!r}")
        dirs = set(self.dirs) | {"/"}
        for path in [*self.files, *self.dirs, *self.symlinks]:
            head = parent(path)
            while head not in dirs:
                dirs.add(head)
                head = parent(head)
        object.__setattr__(self, "dirs", frozenset(dirs))

    # -- the kernel's path walk -------------------------------------------------------

    def walk(self, path: str, follow_last: bool) -> str | None:
        """The physical path ``path`` names (the last link followed or not), or None
        when a component is missing, not a directory, or the walk loops."""
        pending = parts(path)
        current = "/"
        hops = 0
        while pending:
            name = pending.pop(0)
            if name == "..":
                current = parent(current)
                continue
            candidate = join(current, name)
            if candidate in self.symlinks and (pending or follow_last):
                hops += 1
                if hops > SYMLOOP_MAX:
                    return None
                target = self.symlinks[candidate]
                pending = parts(target) + pending
                if target.startswith("/"):
                    current = "/"
                continue
            if pending and candidate not in self.dirs:
                return None
            current = candidate
        return current

    def resolve(self, path: str) -> str | None:
        """The canonical path of an existing object (``realpath``), else None."""
        found = self.walk(path, follow_last=True)
        return found if found is not None and self.exists_physical(found) else None

    def exists_physical(self, physical: str) -> bool:
        return physical in self.files or physical in self.dirs or physical in self.symlinks

    def exists(self, path: str) -> bool:
        """``Path::exists`` (follows symlinks)."""
        return self.resolve(path) is not None

    def lstat_is_symlink(self, path: str) -> bool:
        """``symlink_metadata(path).is_symlink()``: intermediate links followed."""
        physical = self.walk(path, follow_last=False)
        return physical is not None and physical in self.symlinks

    def readlink(self, path: str) -> str | None:
        physical = self.walk(path, follow_last=False)
        return self.symlinks.get(physical) if physical is not None else None

    def create_target(self, path: str) -> str | None:
        """Where creating ``path`` puts the new entry (its parent resolved), or None."""
        if path == "/":
            return None
        head = self.resolve(parent(path))
        if head is None or head not in self.dirs:
            return None
        return join(head, path.rstrip("/").rsplit("/", 1)[1])

    def is_dir(self, physical: str) -> bool:
        return physical in self.dirs

    def executables(self) -> list[str]:
        """Every path a process's ``/proc/<pid>/exe`` can read: a canonical regular file."""
        return sorted(self.files)

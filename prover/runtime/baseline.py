"""The filesystem paths the sandbox adds to a policy before Landlock is built.

``crates/openshell-sandbox/src/lib.rs``: ``PROXY_BASELINE_READ_ONLY``,
``PROXY_BASELINE_READ_WRITE`` (a policy with network rules runs in proxy mode),
``GPU_BASELINE_READ_ONLY``, ``GPU_BASELINE_READ_WRITE`` and the per-GPU device nodes of
``enumerate_gpu_device_nodes`` (a sandbox with ``/dev/nvidiactl`` or ``/dev/dxg``).
"""

from __future__ import annotations

import re

PROXY_READ_ONLY = ("/usr", "/lib", "/etc", "/app", "/var/log", "/proc", "/dev/urandom")
PROXY_READ_WRITE = ("/tmp",)
GPU_READ_ONLY = ("/run/nvidia-persistenced", "/usr/lib/wsl")
GPU_READ_WRITE = (
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
    "/dev/dxg",
    "/proc",
)
#: ``enumerate_gpu_device_nodes``: ``/dev/nvidia`` followed by decimal digits only.
GPU_DEVICE_NODE = re.compile(r"/dev/nvidia[0-9]+")

#: Paths every OCI container has whatever its image: the runtime mounts ``/proc``,
#: ``/dev`` (with its default devices) and ``/sys`` (OCI runtime spec, config-linux.md
#: "Default Devices" and the default mounts of runc, crun and containerd).
ALWAYS_PRESENT = frozenset(
    (
        "/",
        "/proc",
        "/dev",
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
        "/dev/pts",
        "/dev/shm",
        "/sys",
        # Docker, Podman and the kubelet bind-mount these into every container.
        "/etc",
        "/etc/hosts",
        "/etc/hostname",
        "/etc/resolv.conf",
    )
)

#: Directories every Linux distribution image has (the FHS base). Where the evidence is
#: silent, a policy listing one is read as having a Landlock ruleset, and the verdict
#: declares that assumption (were the path missing, ``best_effort`` would run without).
FHS_PRESENT = frozenset(("/usr", "/usr/bin", "/usr/lib", "/bin", "/lib", "/var"))


def enrichment_paths(
    *, proxy: bool, gpu: bool, device_nodes: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``collect_baseline_enrichment_paths``: the read-only and read-write paths to add
    (a path both lists name, ``/proc`` under a GPU, is read-write only)."""
    ro: list[str] = []
    rw: list[str] = []
    if proxy:
        ro += PROXY_READ_ONLY
        rw += PROXY_READ_WRITE
    if gpu:
        ro += [p for p in GPU_READ_ONLY if p not in ro]
        rw += [p for p in (*GPU_READ_WRITE, *device_nodes) if p not in rw]
    return tuple(p for p in ro if p not in rw), tuple(rw)

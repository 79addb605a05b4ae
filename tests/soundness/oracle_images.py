"""Random sandbox images for the oracle campaign, and the evidence document for each.

The evidence states only what the image really is, in the fields the document has:
``workdir``, the OCI ``USER`` (its user part as ``user``, its group part, when it
declares one, as ``group``), the accounts of ``/etc/passwd`` and ``/etc/group``, and
every symlink (complete beneath ``/``); where the prover's document accepts them, also
the primary gids, the driver, the GPU and which paths exist. What it cannot state the
prover must not assume.
"""

from __future__ import annotations

import random

import yaml

from tests.soundness.sandbox_oracle import Image

BASE_FILES = (
    "/usr/bin/curl",
    "/usr/bin/git",
    "/usr/bin/python3.11",
    "/usr/lib/libc.so.6",
    "/etc/passwd",
    "/etc/hosts",
    "/dev/urandom",
    "/dev/null",
    "/sandbox/main.py",
)
BASE_DIRS = ("/usr/bin", "/usr/lib", "/etc", "/tmp", "/sandbox", "/proc", "/dev", "/var")
OPTIONAL_DIRS = ("/lib", "/app", "/var/log", "/opt/tools", "/home/agent")
GPU_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm")


#: A plain Docker image: merged /usr, USER sandbox whose primary group is sandbox.
STANDARD_IMAGE = Image(
    files=frozenset(BASE_FILES),
    dirs=frozenset(BASE_DIRS) | frozenset(OPTIONAL_DIRS),
    symlinks={"/bin": "usr/bin", "/usr/bin/python3": "python3.11"},
    passwd={"root": (0, 0), "sandbox": (1000, 1000)},
    groups={"root": 0, "sandbox": 1000},
    user="sandbox",
    workdir="/sandbox",
)


def random_image(rng: random.Random) -> Image:
    files = set(BASE_FILES)
    dirs = set(BASE_DIRS) | {d for d in OPTIONAL_DIRS if rng.random() < 0.7}
    symlinks: dict[str, str] = {}
    if rng.random() < 0.6:
        symlinks["/bin"] = "usr/bin"  # merged /usr: /bin/curl names no process
    if rng.random() < 0.7:
        symlinks["/usr/bin/python3"] = "python3.11"
    if rng.random() < 0.4:
        symlinks["/usr/bin/py"] = (
            "/usr/bin/python3" if "/usr/bin/python3" in symlinks else "python3.11"
        )
    if rng.random() < 0.4:
        symlinks["/work"] = "/sandbox"
    if rng.random() < 0.3:
        symlinks["/etc/alt"] = "../tmp"
    if rng.random() < 0.15:
        files |= set(GPU_FILES)
    sandbox_gid = rng.choice((1000, 1000, 100))
    passwd = {"root": (0, 0), "sandbox": (1000, sandbox_gid), "agent": (1001, 1001)}
    groups = {"root": 0, "users": 100, "sandbox": 1000, "agent": 1001}
    user = rng.choice(("sandbox", "sandbox", "agent", "1001", "sandbox:users", "sandbox:agent"))
    driver = rng.choices(("docker", "podman", "kubernetes", "vm"), (8, 1, 1, 1))[0]
    return Image(
        files=frozenset(files),
        dirs=frozenset(dirs),
        symlinks=symlinks,
        passwd=passwd,
        groups=groups,
        user=user,
        workdir="/sandbox",
        driver=driver,
        driver_ids=(1002, 1002),
    )


def _document_fields() -> set[str]:
    """The keys the prover's evidence document accepts (the campaign may import the
    prover; the oracle may not). Newer documents can state more of the image."""
    try:
        from prover.environment.document import _Document
    except ImportError:  # pragma: no cover - the prover is always installed here
        return set()
    return set(_Document.model_fields)


def _existence_keys(image: Image) -> list[str]:
    """Physical paths whose existence a check may need: the image's own, and every
    policy path, baseline path and binary the generator writes that is canonical."""
    from tests.soundness.oracle_policies import BINARIES, FS_PATHS
    from tests.soundness.sandbox_oracle.filesystem import (
        GPU_BASELINE_READ_ONLY,
        GPU_BASELINE_READ_WRITE,
        PROXY_BASELINE_READ_ONLY,
        PROXY_BASELINE_READ_WRITE,
    )

    seeds = {*image.files, *image.dirs, *FS_PATHS, *BINARIES, "/dev/null"}
    seeds |= {*PROXY_BASELINE_READ_ONLY, *PROXY_BASELINE_READ_WRITE}
    seeds |= {*GPU_BASELINE_READ_ONLY, *GPU_BASELINE_READ_WRITE}
    if image.workdir:
        seeds.add(image.workdir)
    keys = []
    for path in sorted(seeds):
        canonical = path == "/" or (path.startswith("/") and "*" not in path and "//" not in path)
        canonical = canonical and not path.endswith("/") and "/." not in path
        if not canonical:
            continue
        walked = image.walk(path, follow_last=False)
        # a path that is no link's way and whose walk stops is missing (an ancestor is)
        through_link = any(p in image.symlinks for p in _prefixes(path))
        if walked == path or (walked is None and not through_link):
            keys.append(path)
    return keys


def _prefixes(path: str) -> list[str]:
    names = [n for n in path.split("/") if n]
    return ["/" + "/".join(names[:i]) for i in range(1, len(names) + 1)]


def evidence_document(image: Image) -> str:
    fields = _document_fields()
    user, _, group = (image.user or "").partition(":")
    doc: dict[str, object] = {"version": 1}
    if image.workdir:
        doc["workdir"] = image.workdir
    if user:
        doc["user"] = user
    if group:
        doc["group"] = group
    doc["users"] = {name: uid for name, (uid, _) in sorted(image.passwd.items())}
    doc["groups"] = dict(sorted(image.groups.items()))
    doc["symlinks"] = dict(sorted(image.symlinks.items()))
    doc["symlinks_complete_beneath"] = ["/"]
    if "primary_gids" in fields:
        doc["primary_gids"] = {name: gid for name, (_, gid) in sorted(image.passwd.items())}
    if "driver" in fields:
        doc["driver"] = image.driver
    if "gpu" in fields:
        doc["gpu"] = image.exists("/dev/nvidiactl") or image.exists("/dev/dxg")
    if "paths_exist" in fields:
        doc["paths_exist"] = {path: image.exists_physical(path) for path in _existence_keys(image)}
    return yaml.safe_dump(doc, sort_keys=False)


def describe(image: Image) -> str:
    """One line naming what the evidence cannot say (for a finding's report)."""
    primary = {n: g for n, (_, g) in image.passwd.items()}
    gpu = image.exists("/dev/nvidiactl")
    missing = [d for d in OPTIONAL_DIRS if d not in image.dirs]
    return (
        f"driver={image.driver} USER={image.user} primary_gids={primary} gpu={gpu} "
        f"symlinks={image.symlinks} missing={missing}"
    )

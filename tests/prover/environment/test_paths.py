"""Path resolution through listed symlinks, differentially against the real filesystem.

A random tree of directories, files and symlinks (relative and absolute targets, chains,
loops) is built in a temporary directory; the collector writes its evidence document;
every path resolved from the document must be where ``os.path.realpath`` lands on the
real tree, and a path the real filesystem cannot resolve (a loop) is never resolved.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from prover.environment.collect import collect_rootfs
from prover.environment.paths import PathResolver
from prover.policy.fspath import is_beneath

NAMES = ("a", "b", "c", "d")


def _build(root: Path, rng: random.Random) -> list[str]:
    """A random tree under ``root``; returns every image path made."""
    made: list[str] = []
    dirs = ["/"]
    for _ in range(40):
        parent = rng.choice(dirs)
        name = rng.choice(NAMES) + str(rng.randrange(3))
        path = ("" if parent == "/" else parent) + "/" + name
        host = root / path.lstrip("/")
        if host.exists() or host.is_symlink():
            continue
        kind = rng.random()
        if kind < 0.45:
            host.mkdir()
            dirs.append(path)
        elif kind < 0.6:
            host.write_text("x")
        else:
            target_img = rng.choice([*dirs, *made, "/missing/x"])
            if rng.random() < 0.5:
                # relative target, possibly with '..'
                target = os.path.relpath(target_img, parent if parent != "/" else "/")
                os.symlink(target, host)
            else:
                os.symlink(str(root) + target_img, host)  # absolute in the image
        made.append(path)
    return made


def _image_targets(document: dict, root: Path) -> dict[str, str]:
    """The host's absolute targets written back as image-absolute ones."""
    prefix = str(root)
    return {
        link: (target[len(prefix) :] or "/") if target.startswith(prefix) else target
        for link, target in document["symlinks"].items()
    }


@pytest.mark.parametrize("seed", range(30))
def test_resolution_agrees_with_realpath(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "root"
    root.mkdir()
    made = _build(root, rng)
    document = collect_rootfs(str(root))
    assert document["symlinks_complete_beneath"]  # the whole tree was readable
    resolver = PathResolver(
        _image_targets(document, root), tuple(document["symlinks_complete_beneath"])
    )
    probes = [*made, *(p + "/" + rng.choice(NAMES) for p in made), "/", "/nothing/here"]
    resolved_some = 0
    for path in probes:
        resolved, _ = resolver.resolve(path)
        host = str(root) + path if path != "/" else str(root)
        if resolved is None:
            # a loop, or a path through a top-level name the image does not have (the
            # collector claims nothing there: a volume could be mounted at run time)
            assert _loops(host) or _outside_the_tree(root, host), path
            continue
        resolved_some += 1
        expected = os.path.realpath(host)
        assert str(root) + ("" if resolved == "/" else resolved) == expected, (path, resolved)
    assert resolved_some > len(probes) // 2


def _outside_the_tree(root: Path, host: str) -> bool:
    real = os.path.realpath(host)
    top = real[len(str(root)) :].split("/")[1]
    return real.startswith(str(root) + "/") and not (root / top).exists()


def _loops(host: str) -> bool:
    try:
        os.path.realpath(host, strict=True)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return False


def test_loops_and_long_chains_are_refused() -> None:
    loop = PathResolver({"/a": "b", "/b": "a"}, ("/",))
    assert loop.resolve("/a/x")[0] is None
    chain = {f"/l{i}": f"l{i + 1}" for i in range(50)}
    assert PathResolver(chain, ("/",)).resolve("/l0")[0] is None
    short = {f"/l{i}": f"l{i + 1}" for i in range(10)}
    assert PathResolver(short, ("/",)).resolve("/l0")[0] == "/l10"


def test_relative_absolute_and_dotdot_targets() -> None:
    links = {"/bin": "usr/bin", "/usr/lib/x": "../share/y", "/opt/app": "/srv/app"}
    resolver = PathResolver(links, ("/",))
    assert resolver.resolve("/bin/sh") == ("/usr/bin/sh", ("/bin",))
    assert resolver.resolve("/usr/lib/x/z")[0] == "/usr/share/y/z"
    assert resolver.resolve("/opt/app/data")[0] == "/srv/app/data"


def test_silent_evidence_resolves_nothing_outside_complete_paths() -> None:
    resolver = PathResolver({"/bin": "usr/bin"}, ("/usr", "/etc"))
    assert resolver.resolve("/usr/bin/sh")[0] == "/usr/bin/sh"
    assert resolver.resolve("/bin/sh")[0] == "/usr/bin/sh"  # / itself is on the way
    assert resolver.resolve("/workspace/x")[0] is None
    assert PathResolver({}, ()).resolve("/etc")[0] is None


def test_is_beneath() -> None:
    assert is_beneath("/a/b", "/a") and is_beneath("/a", "/a") and is_beneath("/x", "/")
    assert not is_beneath("/ab", "/a")

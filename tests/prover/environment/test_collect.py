"""The collector on a synthetic root filesystem and on synthetic image archives."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from prover.environment import load_environment
from prover.environment.collect import CollectError, collect_rootfs
from prover.environment.image import collect_image
from prover.environment.paths import PathResolver

PASSWD = "root:x:0:0:root:/root:/bin/bash\nsandbox:x:1000:1000::/sandbox:/bin/sh\n"
GROUP = "root:x:0:\nsandbox:x:1000:\n"


def _rootfs(root: Path) -> None:
    root.mkdir(exist_ok=True)
    for d in ("usr/bin", "usr/lib", "etc", "sandbox", "proc/1", "dev", "secret/deep"):
        (root / d).mkdir(parents=True)
    (root / "etc/passwd").write_text(PASSWD)
    (root / "etc/group").write_text(GROUP)
    (root / "usr/bin/python3.11").write_text("")
    os.symlink("usr/bin", root / "bin")
    os.symlink("python3.11", root / "usr/bin/python3")
    os.symlink("/proc/self/fd", root / "proc/1/fd")  # beneath /proc: skipped
    os.symlink("/etc", root / "secret/deep/e")


def _reads_back(data: dict) -> dict:
    load_environment(json.dumps(data))
    return data


def test_rootfs_collects_accounts_symlinks_and_completeness(tmp_path: Path) -> None:
    _rootfs(tmp_path)
    data = _reads_back(collect_rootfs(str(tmp_path), workdir="/sandbox", user="sandbox"))
    assert data["workdir"] == "/sandbox"
    assert (data["user"], data["group"]) == ("sandbox", "sandbox")
    assert data["users"] == {"root": 0, "sandbox": 1000}
    assert data["groups"] == {"root": 0, "sandbox": 1000}
    assert data["symlinks"] == {
        "/bin": "usr/bin",
        "/usr/bin/python3": "python3.11",
        "/secret/deep/e": "/etc",
    }
    complete = data["symlinks_complete_beneath"]
    assert "/" not in complete and "/proc" not in complete and "/dev" not in complete
    assert {"/usr", "/etc", "/sandbox", "/secret"} <= set(complete)
    resolver = PathResolver(data["symlinks"], tuple(complete))
    assert resolver.resolve("/bin/python3")[0] == "/usr/bin/python3.11"
    assert resolver.resolve("/proc/1/fd")[0] is None


def test_an_unreadable_directory_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _rootfs(tmp_path)
    real_scandir = os.scandir
    blocked = str(tmp_path / "secret" / "deep")

    def scandir(path: str):  # type: ignore[no-untyped-def]
        if str(path) == blocked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    data = _reads_back(collect_rootfs(str(tmp_path)))
    complete = data["symlinks_complete_beneath"]
    assert "/secret" not in complete and "/secret/deep" not in complete
    assert "/usr" in complete
    assert "/secret/deep/e" not in data["symlinks"]
    resolver = PathResolver(data["symlinks"], tuple(complete))
    assert resolver.resolve("/secret/deep/e/x")[0] is None
    assert "user" not in data and "workdir" not in data


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    _rootfs(tmp_path)
    data = _reads_back(collect_rootfs(str(tmp_path), max_entries=3))
    # what it did not reach is claimed nowhere
    resolver = PathResolver(data["symlinks"], tuple(data["symlinks_complete_beneath"]))
    assert resolver.resolve("/usr/bin/python3")[0] in (None, "/usr/bin/python3.11")
    assert len(data["symlinks_complete_beneath"]) < 8


def test_account_files_are_read_inside_the_root_only(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    os.symlink("/../../../../etc/shadow-nowhere", tmp_path / "etc/passwd")
    data = collect_rootfs(str(tmp_path))
    assert data["users"] == {}


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(CollectError):
        collect_rootfs(str(tmp_path / "missing"))


# -- image archives ------------------------------------------------------------------------
def _layer(entries: list[tuple[str, str, str | bytes]], compress: bool = False) -> bytes:
    """A layer tar: (name, kind d/f/l, content or target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind, value in entries:
            info = tarfile.TarInfo(name)
            if kind == "d":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind == "l":
                info.type = tarfile.SYMTYPE
                info.linkname = str(value)
                tar.addfile(info)
            else:
                data = value.encode() if isinstance(value, str) else value
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    raw = buffer.getvalue()
    return gzip.compress(raw) if compress else raw


LAYERS = [
    [
        ("etc", "d", ""),
        ("etc/passwd", "f", PASSWD),
        ("etc/group", "f", GROUP),
        ("usr/bin", "d", ""),
        ("bin", "l", "usr/bin"),
        ("opt/old", "d", ""),
        ("opt/old/link", "l", "/etc"),
        ("var/cache/x", "l", "/tmp"),
        ("proc", "d", ""),
    ],
    [
        ("opt/.wh.old", "f", ""),  # deletes /opt/old and its symlink
        ("var/cache/.wh..wh..opq", "f", ""),  # empties /var/cache of the layer below
        ("var/cache/y", "l", "../z"),
        ("sandbox", "d", ""),
    ],
]
CONFIG = {"config": {"WorkingDir": "/sandbox", "User": "sandbox"}}


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _docker_save(path: Path) -> None:
    with tarfile.open(path, "w") as tar:
        names = []
        for index, entries in enumerate(LAYERS):
            names.append(f"layer{index}/layer.tar")
            _add(tar, names[-1], _layer(entries))
        _add(tar, "config.json", json.dumps(CONFIG).encode())
        manifest = [{"Config": "config.json", "RepoTags": ["x:1"], "Layers": names}]
        _add(tar, "manifest.json", json.dumps(manifest).encode())


def _oci(path: Path) -> None:
    def blob(tar: tarfile.TarFile, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        _add(tar, f"blobs/sha256/{digest}", data)
        return f"sha256:{digest}"

    with tarfile.open(path, "w") as tar:
        layers = [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": blob(tar, _layer(e, True)),
            }
            for e in LAYERS
        ]
        config = {"digest": blob(tar, json.dumps(CONFIG).encode())}
        manifest = blob(
            tar, json.dumps({"schemaVersion": 2, "config": config, "layers": layers}).encode()
        )
        index = {"schemaVersion": 2, "manifests": [{"digest": manifest}]}
        _add(tar, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add(tar, "index.json", json.dumps(index).encode())


@pytest.mark.parametrize("build", [_docker_save, _oci])
def test_image_layers_apply_in_order_with_whiteouts(tmp_path: Path, build) -> None:  # type: ignore[no-untyped-def]
    archive = tmp_path / "image.tar"
    build(archive)
    progress: list[str] = []
    data = _reads_back(collect_image(str(archive), progress=progress.append))
    assert data["workdir"] == "/sandbox"
    assert (data["user"], data["group"]) == ("sandbox", "sandbox")
    assert data["users"]["sandbox"] == 1000
    assert data["symlinks"] == {"/bin": "usr/bin", "/var/cache/y": "../z"}
    complete = data["symlinks_complete_beneath"]
    assert "/proc" not in complete and "/" not in complete
    assert {"/etc", "/usr", "/opt", "/var", "/sandbox"} <= set(complete)
    assert len(progress) == 2


def test_a_broken_archive_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tar"
    bad.write_bytes(b"not a tar")
    with pytest.raises(CollectError, match="cannot read image archive"):
        collect_image(str(bad))
    empty = tmp_path / "empty.tar"
    with tarfile.open(empty, "w"):
        pass
    with pytest.raises(CollectError, match="not an image archive"):
        collect_image(str(empty))


def _single_layer_image(path: Path, layer: bytes) -> None:
    with tarfile.open(path, "w") as tar:
        _add(tar, "l/layer.tar", layer)
        _add(tar, "config.json", json.dumps({"config": {}}).encode())
        manifest = [{"Config": "config.json", "Layers": ["l/layer.tar"]}]
        _add(tar, "manifest.json", json.dumps(manifest).encode())


def test_a_hard_link_to_a_symlink_is_a_symlink_and_defaults_apply(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        link = tarfile.TarInfo("opt/a")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        tar.addfile(link)
        hard = tarfile.TarInfo("opt/b")
        hard.type, hard.linkname = tarfile.LNKTYPE, "opt/a"
        tar.addfile(hard)
    archive = tmp_path / "image.tar"
    _single_layer_image(archive, buffer.getvalue())
    data = _reads_back(collect_image(str(archive)))
    assert data["symlinks"] == {"/opt/a": "/etc", "/opt/b": "/etc"}
    assert (data["workdir"], data["user"]) == ("/", "root")  # Docker's defaults


def test_an_entry_leaving_the_root_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "image.tar"
    _single_layer_image(archive, _layer([("../../etc/evil", "f", "x")]))
    with pytest.raises(CollectError, match="leaves the root"):
        collect_image(str(archive))


def test_the_group_follows_the_oci_rule(tmp_path: Path) -> None:
    archive = tmp_path / "image.tar"
    layer = _layer([("etc/passwd", "f", PASSWD), ("etc/group", "f", GROUP)])
    with tarfile.open(archive, "w") as tar:
        _add(tar, "l/layer.tar", layer)
        _add(tar, "config.json", json.dumps({"config": {"User": "4242"}}).encode())
        manifest = [{"Config": "config.json", "Layers": ["l/layer.tar"]}]
        _add(tar, "manifest.json", json.dumps(manifest).encode())
    data = _reads_back(collect_image(str(archive)))
    assert (data["user"], data["group"]) == ("4242", "0")  # no passwd entry: root's group
    data = _reads_back(collect_image(str(archive), user="sandbox"))
    assert (data["user"], data["group"]) == ("sandbox", "sandbox")  # primary gid 1000
    _rootfs(tmp_path / "root")
    data = _reads_back(collect_rootfs(str(tmp_path / "root"), user="sandbox:root"))
    assert (data["user"], data["group"]) == ("sandbox", "root")


def test_a_mount_point_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _rootfs(tmp_path)
    real_scandir = os.scandir
    mounted = str(tmp_path / "sandbox")

    class Entry:
        def __init__(self, entry: os.DirEntry[str]) -> None:
            self._entry = entry
            self.name, self.path = entry.name, entry.path

        def is_symlink(self) -> bool:
            return self._entry.is_symlink()

        def is_dir(self, *, follow_symlinks: bool = True) -> bool:
            return self._entry.is_dir(follow_symlinks=follow_symlinks)

        def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
            info = self._entry.stat(follow_symlinks=follow_symlinks)
            if self.path == mounted:
                fields = list(info)
                fields[2] = info.st_dev + 1  # another device
                return os.stat_result(fields)
            return info

    class Listing:
        def __init__(self, path: str) -> None:
            self._listing = real_scandir(path)

        def __enter__(self) -> list[Entry]:
            return [Entry(e) for e in self._listing]

        def __exit__(self, *exc: object) -> None:
            self._listing.close()

    monkeypatch.setattr(os, "scandir", Listing)
    data = _reads_back(collect_rootfs(str(tmp_path)))
    assert "/sandbox" not in data["symlinks_complete_beneath"]
    assert "/usr" in data["symlinks_complete_beneath"]
    resolver = PathResolver(data["symlinks"], tuple(data["symlinks_complete_beneath"]))
    assert resolver.resolve("/sandbox/project")[0] is None


def test_the_collector_states_which_baseline_paths_exist_and_the_users_primary_gid(
    tmp_path: Path,
) -> None:
    # The runtime adds a proxy baseline path only where it exists (lib.rs
    # enrich_proto_baseline_paths), and resolves an omitted group to the USER's primary
    # gid (identity.rs): both are facts of the image.
    _rootfs(tmp_path)
    os.symlink("usr/lib", tmp_path / "lib")
    (tmp_path / "etc/passwd").write_text(PASSWD.replace("1000:1000", "1000:100"))
    data = _reads_back(collect_rootfs(str(tmp_path), workdir="/sandbox", user="sandbox"))
    # /lib exists through its link; /app, /var/log and /tmp are absent, and absence is
    # never claimed (a volume may be mounted there at run time); /etc the runtime mounts
    assert data["paths_exist"] == {"/usr": True, "/lib": True}
    assert data["primary_gids"] == {"sandbox": 100}

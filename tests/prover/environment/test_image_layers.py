"""The image collector applies layers as container runtimes extract them, within limits.

Each archive is built here with :mod:`tarfile`. Runtime facts: containerd
``pkg/archive/tar.go`` (``applyNaive``: ``fs.RootPath`` on each entry's parent,
``mkparent``, ``hardlinkRootPath``), ``diff/apply/apply_linux.go`` (overlay: each layer
extracted alone), moby ``pkg/archive/diff.go`` (``UnpackLayer``); accounts as OpenShell's
``openshell-supervisor-process/src/identity.rs`` reads them.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prover.api import check_boundary
from prover.environment import image, load_environment, writer
from prover.environment.collect import CollectError
from prover.environment.image import collect_image
from prover.environment.paths import PathResolver
from prover.results import Verdict

PASSWD = "root:x:0:0:root:/root:/bin/bash\nsandbox:x:1000:1000::/sandbox:/bin/sh\n"
GROUP = "root:x:0:\nsandbox:x:1000:\n"
Entry = tuple[str, str, Any]  # name, kind (d f l h), content / target


def _layer(entries: list[Entry], compress: bool = False) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, value in entries:
            info = tarfile.TarInfo(name)
            if kind == "d":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind in ("l", "h"):
                info.type = tarfile.SYMTYPE if kind == "l" else tarfile.LNKTYPE
                info.linkname = value
                tar.addfile(info)
            else:
                data = value.encode() if isinstance(value, str) else value
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    raw = buffer.getvalue()
    return gzip.compress(raw) if compress else raw


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _image(path: Path, layers: list[bytes], config: dict | None = None, gz: bool = False) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        names = []
        for index, layer in enumerate(layers):
            names.append(f"l{index}/layer.tar")
            _add(tar, names[-1], layer)
        _add(tar, "config.json", json.dumps(config or {"config": {}}).encode())
        manifest = [{"Config": "config.json", "Layers": names}]
        _add(tar, "manifest.json", json.dumps(manifest).encode())
    raw = buffer.getvalue()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def _collect(path: Path, **kwargs: Any) -> dict:
    data = collect_image(str(path), **kwargs)
    load_environment(json.dumps(data, indent=2, ensure_ascii=False))  # reads back
    return data


def _complete(data: dict) -> PathResolver:
    return PathResolver(data["symlinks"], tuple(data["symlinks_complete_beneath"]))


# -- symlinks as runtimes extract them ---------------------------------------------------------
LINK_THEN_BENEATH = [
    ("etc/", "d", ""),
    ("etc/passwd", "f", PASSWD),
    ("work/", "d", ""),
    ("work/link", "l", "/etc"),
    ("work/link/planted", "f", "x"),  # lands in /etc: the link stays a link
]


@pytest.mark.parametrize("gz", [False, True])
def test_a_symlink_followed_by_an_entry_beneath_it_stays_a_symlink(
    tmp_path: Path, gz: bool
) -> None:
    layers = [_layer(LINK_THEN_BENEATH, compress=gz)]
    data = _collect(_image(tmp_path / "i.tar", layers, {"config": {"User": "sandbox"}}, gz=gz))
    assert (data["user"], data["group"], data["users"]) == (
        "sandbox",
        "1000",
        {"root": 0, "sandbox": 1000},
    )
    assert data["symlinks"] == {"/work/link": "/etc"}
    assert data["symlinks_complete_beneath"] == ["/etc", "/work"]
    assert _complete(data).resolve("/work/link")[0] == "/etc"
    # the forged pass: /work/link is /etc, not part of /work
    boundary = "version: 1\nfilesystem_policy: {read_write: [/work]}\n"
    candidate = "version: 1\nfilesystem_policy: {read_write: [/work/link]}\n"
    text = json.dumps(data)
    for reference in (False, True):
        check = check_boundary(candidate, boundary, reference_semantics=reference, environment=text)
        assert check.outcome.verdict is not Verdict.WITHIN, check.outcome.reason


def test_relative_targets_stop_at_the_root_and_chains_are_followed(tmp_path: Path) -> None:
    layer = _layer(
        [
            ("a", "l", "../../../../opt"),  # '..' at the root stays at the root
            ("b", "l", "a/sub"),
            ("b/file", "f", ""),
            ("opt/sub/dir/", "d", ""),
        ]
    )
    data = _collect(_image(tmp_path / "i.tar", [layer]))
    assert data["symlinks"] == {"/a": "../../../../opt", "/b": "a/sub"}
    complete = set(data["symlinks_complete_beneath"])
    assert {"/opt"} <= complete and not any(p.startswith(("/a/", "/b/")) for p in complete)
    resolver = _complete(data)
    assert resolver.resolve("/b/file")[0] == "/opt/sub/file"


def test_an_entry_beneath_a_symlink_of_a_lower_layer_claims_only_what_runtimes_share(
    tmp_path: Path,
) -> None:
    # overlayfs snapshotters hide /work/link with a directory; extraction into the mounted
    # image follows it (and overwrites /etc/passwd): only what both trees hold is claimed
    lower = _layer(
        [
            ("etc/", "d", ""),
            ("etc/passwd", "f", PASSWD),
            ("work/", "d", ""),
            ("work/link", "l", "/etc"),
            ("usr/bin/", "d", ""),
            ("lib", "l", "usr/lib"),
            ("usr/lib/", "d", ""),
        ]
    )
    upper = _layer(
        [
            ("work/link/passwd", "f", "evil:x:0:0:::\n"),
            ("lib/x.so", "f", ""),
            ("usr/bin/tool", "l", "/opt/tool"),
        ]
    )
    notes: list[str] = []
    data = _collect(_image(tmp_path / "i.tar", [lower, upper]), progress=notes.append)
    assert any(
        "lies beneath '/work/link', a symlink of layer 1: runtimes differ" in n for n in notes
    )
    assert data["symlinks"] == {"/usr/bin/tool": "/opt/tool"}
    assert data["users"] == {}  # /etc/passwd differs between the two
    resolver = _complete(data)
    for unclaimed in ("/work/link", "/lib/x.so", "/usr/lib/x.so"):
        assert resolver.resolve(unclaimed)[0] is None, unclaimed
    assert resolver.resolve("/usr/bin/tool")[0] is None  # dangling: /opt is not claimed
    assert "/usr/bin" in data["symlinks_complete_beneath"]
    boundary = "version: 1\nfilesystem_policy: {read_write: [/work]}\n"
    candidate = "version: 1\nfilesystem_policy: {read_write: [/work/link]}\n"
    for reference in (False, True):
        check = check_boundary(
            candidate, boundary, reference_semantics=reference, environment=json.dumps(data)
        )
        assert check.outcome.verdict is not Verdict.WITHIN, check.outcome.reason
    # replacing the link by a directory first (what a layer diff holds) is no ambiguity
    upper = _layer([("work/link/", "d", ""), ("work/link/planted", "f", "x")])
    notes.clear()
    data = _collect(_image(tmp_path / "j.tar", [lower, upper]), progress=notes.append)
    assert data["symlinks"] == {"/lib": "usr/lib"} and not any("differ" in n for n in notes)
    assert "/work" in data["symlinks_complete_beneath"]


def test_symlink_loops_fail_with_one_line(tmp_path: Path) -> None:
    layer = _layer([("a", "l", "b"), ("b", "l", "a"), ("a/x", "f", "")])
    with pytest.raises(CollectError, match="more than 40 symlinks"):
        collect_image(str(_image(tmp_path / "i.tar", [layer])))


# -- whiteouts, opaque directories, hard links -------------------------------------------------
def test_whiteouts_apply_through_the_layers_own_symlinks(tmp_path: Path) -> None:
    lower = _layer([("opt/a/", "d", ""), ("opt/a/x", "l", "/etc"), ("opt/b", "l", "/usr")])
    upper = _layer([("s", "l", "opt"), ("s/.wh.a", "f", ""), ("opt/keep", "l", "/srv")])
    data = _collect(_image(tmp_path / "i.tar", [lower, upper]))
    assert data["symlinks"] == {"/opt/b": "/usr", "/opt/keep": "/srv", "/s": "opt"}


def test_a_whiteout_of_its_own_layer_is_refused(tmp_path: Path) -> None:
    layer = _layer([("opt/x", "l", "/etc"), ("opt/.wh.x", "f", "")])
    with pytest.raises(CollectError, match="whites out an entry of its own layer"):
        collect_image(str(_image(tmp_path / "i.tar", [layer])))


def test_an_opaque_marker_hides_lower_layers_wherever_it_stands(tmp_path: Path) -> None:
    lower = _layer(
        [("d/", "d", ""), ("d/old", "l", "/etc"), ("d/sub/", "d", ""), ("d/sub/x", "l", "/")]
    )
    upper = _layer(
        [("d/", "d", ""), ("d/new", "l", "/srv"), ("d/sub/", "d", ""), ("d/.wh..wh..opq", "f", "")]
    )
    data = _collect(_image(tmp_path / "i.tar", [lower, upper]))
    assert data["symlinks"] == {"/d/new": "/srv"}
    # after directories the layer made implicitly beneath it, runtimes differ: refused
    upper = _layer([("d/", "d", ""), ("d/sub/y", "f", ""), ("d/.wh..wh..opq", "f", "")])
    with pytest.raises(CollectError, match="opaque marker follows directories"):
        collect_image(str(_image(tmp_path / "j.tar", [lower, upper])))


def test_hard_links(tmp_path: Path) -> None:
    layer = _layer([("s", "l", "opt"), ("opt/a", "l", "/etc"), ("opt/b", "h", "s/a")])
    data = _collect(_image(tmp_path / "i.tar", [layer]))
    assert data["symlinks"] == {"/s": "opt", "/opt/a": "/etc", "/opt/b": "/etc"}
    for bad, why in (
        ([("d/", "d", ""), ("x", "h", "d")], "directory"),
        ([("x", "h", "no")], "missing"),
    ):
        with pytest.raises(CollectError, match=f"hard link to a {why}"):
            collect_image(str(_image(tmp_path / "j.tar", [_layer(bad)])))


# -- accounts as the runtime reads them ------------------------------------------------------
def test_a_malformed_passwd_line_yields_no_group(tmp_path: Path) -> None:
    passwd = "root:x:0:0:root:/root:/bin/bash\nsandbox:x:1000:1\n"
    layer = _layer([("etc/passwd", "f", passwd), ("etc/group", "f", GROUP)])
    data = _collect(_image(tmp_path / "i.tar", [layer], {"config": {"User": "sandbox"}}))
    assert data["user"] == "sandbox" and "group" not in data
    assert data["users"] == {"root": 0}


@pytest.mark.parametrize(
    ("passwd", "users"),
    [
        ("a:x:1:1:::\na:x:2:2:::\nb:x:3:3:::\n", {"b": 3}),  # ambiguous: the runtime fails
        ("a:x:1:1:::\u2028b:x:2:2:::\n", {}),  # one line to the runtime, 13 fields
        ("a:x:1:1:::\r\n#b:x:2:2:::\n\nc:x:+3:3:::\n", {"a": 1, "c": 3}),
        ("a:x:1:1:::\n" + "x" * 9000 + "\n", {}),  # an oversized line fails every lookup
        ("a:x:4294967295:1:::\nb:x:1:nan:::\n", {}),
    ],
)
def test_passwd_lines_as_the_runtime_splits_them(tmp_path: Path, passwd: str, users: dict) -> None:
    layer = _layer([("etc/passwd", "f", passwd)])
    assert _collect(_image(tmp_path / "i.tar", [layer]))["users"] == users


# -- limits, each one line ---------------------------------------------------------------------
def test_outer_archive_member_count_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(image, "MAX_MEMBERS", 50)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for index in range(5000):
            _add(tar, f"junk/{index}", b"")
    archive = tmp_path / "junk.tar.gz"
    archive.write_bytes(gzip.compress(buffer.getvalue()))
    with pytest.raises(CollectError, match="more than 50 members"):
        collect_image(str(archive))


def _declaring(name: str, size: int) -> bytes:
    """A tar header declaring ``size`` bytes, followed by a few bytes only."""
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(format=tarfile.PAX_FORMAT) + b"\0" * 1024


@pytest.mark.parametrize("gz", [False, True])
def test_a_declared_3_gb_member_is_refused_before_reading(tmp_path: Path, gz: bool) -> None:
    archive = _image(tmp_path / "i.tar", [_layer([("etc/", "d", "")])])
    raw = _declaring("huge.bin", 3_000_000_000) + archive.read_bytes()
    archive.write_bytes(gzip.compress(raw) if gz else raw)
    with pytest.raises(CollectError, match=r"'huge.bin' declares 3000000000 bytes"):
        collect_image(str(archive))
    inner = _declaring("big/file", 3_000_000_000)
    archive = _image(tmp_path / "j.tar", [inner], gz=gz)
    with pytest.raises(CollectError, match=r"layer 1 entry 'big/file' declares 3000000000"):
        collect_image(str(archive))


def test_path_lengths(tmp_path: Path) -> None:
    long = "/".join(["d" * 200] * 200)  # 40,199 characters
    with pytest.raises(CollectError, match="longer than PATH_MAX"):
        collect_image(str(_image(tmp_path / "i.tar", [_layer([(long, "f", "")])])))
    with pytest.raises(CollectError, match="NAME_MAX"):
        collect_image(str(_image(tmp_path / "i.tar", [_layer([("n" * 300, "f", "")])])))
    # a path runtimes extract but the document cannot key: left out, in one line, and its
    # directory is no longer claimed complete
    deep = "/".join(["p" * 100] * 12)
    notes: list[str] = []
    layer = _layer([(deep + "/link", "l", "/etc"), ("usr/", "d", "")])
    data = _collect(_image(tmp_path / "j.tar", [layer]), progress=notes.append)
    assert data["symlinks"] == {}
    assert any("1 symlinks exceed the document's limits" in n for n in notes)
    assert _complete(data).resolve("/" + deep + "/link")[0] is None
    assert "/usr" in data["symlinks_complete_beneath"]


def test_nesting(tmp_path: Path) -> None:
    archive = tmp_path / "i.tar"
    with tarfile.open(archive, "w") as tar:
        _add(tar, "manifest.json", b"[" * 200_000 + b"]" * 200_000)
    with pytest.raises(CollectError, match="nested too deeply"):
        collect_image(str(archive))


# -- linear work ---------------------------------------------------------------------------------
def _lines_run(call: Callable[[], object]) -> int:
    """Python lines executed by ``call``: its work, independent of the machine's speed."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def test_work_is_linear_in_the_symlinks_and_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one symlink in each of N directories, more than the document holds (the issue's
    # quadratic case at 12,000+; here the document's limit is lowered to keep it quick)
    monkeypatch.setattr(writer, "MAX_SYMLINKS", 200)

    def work(n: int) -> int:
        entries: list[Entry] = [(f"d{i}/", "d", "") for i in range(n)]
        entries += [(f"d{i}/link", "l", "/etc") for i in range(n)]
        archive = _image(tmp_path / f"{n}.tar", [_layer(entries)])
        return _lines_run(lambda: collect_image(str(archive)))

    small, large = work(800), work(1600)
    assert large < 2.3 * small, (small, large)


def test_replacing_an_entry_after_following_a_symlink_is_refused(tmp_path: Path) -> None:
    # containerd remembers 'a/' -> /etc for the whole layer (cachedRootPath); moby does not
    layer = _layer([("a", "l", "/etc"), ("a/x", "f", ""), ("a/", "d", ""), ("a/y", "l", "/")])
    with pytest.raises(CollectError, match="replaces an entry of its own layer"):
        collect_image(str(_image(tmp_path / "i.tar", [layer])))


def test_the_tree_and_each_walk_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prover.environment import layers

    monkeypatch.setattr(layers, "MAX_NODES", 100)
    deep = "/".join(f"x{i}" for i in range(150))
    with pytest.raises(CollectError, match="more than 100 paths"):
        collect_image(str(_image(tmp_path / "i.tar", [_layer([(deep, "f", "")])])))
    monkeypatch.setattr(layers, "MAX_NODES", 10_000)
    chain = [("l0", "l", "/".join(["d"] * 1000))]
    chain += [(f"l{i}", "l", f"l{i - 1}/" + "/".join(["d"] * 1000)) for i in range(1, 30)]
    with pytest.raises(CollectError, match="more than 8192 steps"):
        collect_image(str(_image(tmp_path / "j.tar", [_layer([*chain, ("l29/f", "f", "")])])))


def test_the_walks_stay_linear_in_the_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prover.environment import layers

    monkeypatch.setattr(layers, "FREE_STEPS", 1000)
    chain = [("l0", "l", "/".join(["d"] * 100))]
    chain += [(f"l{i}", "l", f"l{i - 1}/" + "/".join(["d"] * 50)) for i in range(1, 30)]
    entries = [*chain, *((f"l29/f{i}", "f", "") for i in range(40))]
    with pytest.raises(CollectError, match="more than 64 steps an entry on average"):
        collect_image(str(_image(tmp_path / "i.tar", [_layer(entries)])))


@pytest.mark.parametrize(
    "config",
    [
        {"User": "u" * 300, "WorkingDir": "/w"},
        {"User": "a\nb:c", "WorkingDir": "/" + "w" * 5000},
        {"User": "ok:" + "g" * 300},
    ],
)
def test_config_values_the_document_cannot_hold_are_left_out(tmp_path: Path, config: dict) -> None:
    notes: list[str] = []
    data = _collect(
        _image(tmp_path / "i.tar", [_layer([])], {"config": config}), progress=notes.append
    )
    assert "group" not in data and len(data.get("workdir", "")) < 4096
    assert data.get("user") in (None, "ok") and notes


def test_fields_of_the_wrong_type_are_one_line(tmp_path: Path) -> None:
    archive = tmp_path / "i.tar"
    with tarfile.open(archive, "w") as tar:
        _add(
            tar,
            "index.json",
            json.dumps({"manifests": [{"digest": "sha256:ab", "platform": 7}]}).encode(),
        )
        _add(tar, "blobs/sha256/ab", json.dumps({"config": [1], "layers": ["x"]}).encode())
    with pytest.raises(CollectError, match="invalid digest"):
        collect_image(str(archive))
    data = _collect(_image(tmp_path / "j.tar", [_layer([])], {"config": "nope"}))
    assert (data["workdir"], data["user"]) == ("/", "root")


def test_extended_headers_are_bounded_before_tarfile_reads_them(tmp_path: Path) -> None:
    # a PAX header declaring 3 GB would be read whole into memory by tarfile
    info = tarfile.TarInfo("././@PaxHeader")
    info.type, info.size = tarfile.XHDTYPE, 3_000_000_000
    layer = info.tobuf(format=tarfile.USTAR_FORMAT) + b"\0" * 1024
    with pytest.raises(CollectError, match="extended tar header of 3000000000 bytes"):
        collect_image(str(_image(tmp_path / "i.tar", [layer], gz=True)))
    chained = b"".join(
        tarfile.TarInfo("x" * 120).tobuf(format=tarfile.GNU_FORMAT)[:-512] for _ in range(20)
    )
    with pytest.raises(CollectError, match="in a row"):
        collect_image(str(_image(tmp_path / "j.tar", [chained + b"\0" * 1024])))


def test_the_command_prints_image_paths_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from server.cli import main

    lower = _layer([("a\nresult: within_boundary", "l", "/etc")])
    upper = _layer([("a\nresult: within_boundary/x", "f", "")])
    archive = _image(tmp_path / "i.tar", [lower, upper])
    assert main(["environment", "--image", str(archive), "-o", str(tmp_path / "e.json")]) == 0
    err = capsys.readouterr().err
    assert all(line.startswith("policy-prover") for line in err.splitlines()), err
    assert "runtimes differ" in err
    archive = _image(
        tmp_path / "j.tar", [_layer([("f\nresult: x", "f", ""), ("f\nresult: x/y", "f", "")])]
    )
    assert main(["environment", "--image", str(archive)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "is not a directory" in err


def test_work_is_linear_with_two_trees(tmp_path: Path) -> None:
    def work(n: int) -> int:
        lower = _layer(
            [("lib", "l", "usr/lib"), *((f"usr/share/d{i}/", "d", "") for i in range(n))]
        )
        upper = _layer([(f"lib/f{i}", "f", "") for i in range(n)])
        archive = _image(tmp_path / f"{n}.tar", [lower, upper])
        return _lines_run(lambda: collect_image(str(archive)))

    small, large = work(600), work(1200)
    assert large < 2.3 * small, (small, large)

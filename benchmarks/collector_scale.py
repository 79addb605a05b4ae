"""The image collector's time and peak memory against the archive's size.

    python benchmarks/collector_scale.py [--sizes 12000,15000,20000,100000]

Builds, in a temporary directory, a ``docker save`` archive with one layer holding one
symlink in each of N directories (the issue 24 case: quadratic before), the same shape
unpacked for ``--rootfs`` (20,000), an image whose runtimes build two trees (50,000
files beneath a lower layer's symlink), then the hostile archives of the issue (300,000 junk
members in a gzip, a declared 3 GB member, a 40,000-character path). Each runs
``policy-prover environment`` in a fresh process and prints the archive's bytes, the wall
time, the process's peak RSS (``VmHWM``), the exit status and the refusal's line.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The CLI in a fresh process that reports its own peak RSS (VmHWM) on its last line.
CHILD = (
    "import sys\nfrom server.cli import main\ntry:\n    code = main(sys.argv[1:])\n"
    "finally:\n    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
    "    sys.stderr.write('peak ' + hwm[0].split()[1] + '\\n')\nsys.exit(code)\n"
)


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _image(path: Path, layer: bytes) -> Path:
    with tarfile.open(path, "w") as tar:
        _add(tar, "l/layer.tar", layer)
        _add(tar, "config.json", json.dumps({"config": {"User": "sandbox"}}).encode())
        _add(
            tar,
            "manifest.json",
            json.dumps([{"Config": "config.json", "Layers": ["l/layer.tar"]}]).encode(),
        )
    return path


def symlink_dirs(path: Path, n: int) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for i in range(n):
            info = tarfile.TarInfo(f"d{i}")
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
            link = tarfile.TarInfo(f"d{i}/link")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc"
            tar.addfile(link)
    return _image(path, buffer.getvalue())


def split_trees(path: Path, n: int = 50_000) -> Path:
    """n files written beneath a lower layer's symlink: two trees from then on."""
    layers = []
    for entries in (
        [("lib", "usr/lib"), *((f"usr/share/d{i}", None) for i in range(n))],
        [(f"lib/f{i}", "") for i in range(n)],
    ):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for name, value in entries:
                info = tarfile.TarInfo(name)
                if value is None:
                    info.type = tarfile.DIRTYPE
                elif value:
                    info.type, info.linkname = tarfile.SYMTYPE, value
                tar.addfile(info)
        layers.append(buffer.getvalue())
    with tarfile.open(path, "w") as tar:
        for index, layer in enumerate(layers):
            _add(tar, f"l{index}/layer.tar", layer)
        _add(tar, "config.json", b'{"config": {}}')
        manifest = [{"Config": "config.json", "Layers": ["l0/layer.tar", "l1/layer.tar"]}]
        _add(tar, "manifest.json", json.dumps(manifest).encode())
    return path


def junk_members(path: Path, n: int = 300_000) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for i in range(n):
            _add(tar, f"j/{i}", b"")
    path.write_bytes(gzip.compress(buffer.getvalue()))
    return path


def declared_3gb(path: Path) -> Path:
    info = tarfile.TarInfo("huge.bin")
    info.size = 3_000_000_000
    _image(path, b"")
    path.write_bytes(info.tobuf() + b"\0" * 1024 + path.read_bytes())
    return path


def long_path(path: Path) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, "/".join(["d" * 200] * 200), b"")
    return _image(path, buffer.getvalue())


def symlink_tree(path: Path, n: int) -> Path:
    """The same shape unpacked, for ``--rootfs``."""
    for i in range(n):
        (path / f"d{i}").mkdir(parents=True)
        os.symlink("/etc", path / f"d{i}" / "link")
    return path


def run(archive: Path) -> dict[str, object]:
    started = time.perf_counter()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CHILD,
            "environment",
            "--rootfs" if archive.is_dir() else "--image",
            str(archive),
            "-o",
            os.devnull,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    err = child.stderr.read().decode(errors="replace")
    child.wait()
    refusal = [line for line in err.splitlines() if line.startswith("policy-prover: ")]
    peak = [int(line.split()[1]) for line in err.splitlines() if line.startswith("peak ")]
    return {
        "archive_bytes": archive.stat().st_size if archive.is_file() else None,
        "seconds": round(time.perf_counter() - started, 2),
        "peak_rss_mib": round(peak[-1] / 1024, 1) if peak else None,
        "exit": child.returncode,
        "refusal": refusal[0][:160] if refusal else "",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="12000,15000,20000,100000")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cases = [
            (f"symlink in each of {n} dirs", symlink_dirs(base / f"s{n}.tar", int(n)))
            for n in args.sizes.split(",")
        ]
        cases += [
            ("--rootfs, symlink in each of 20000 dirs", symlink_tree(base / "root", 20000)),
            ("50,000 entries beneath a lower layer's symlink", split_trees(base / "split.tar")),
            ("300,000 junk members (gzip)", junk_members(base / "junk.tar.gz")),
            ("declared 3 GB member", declared_3gb(base / "big.tar")),
            ("40,000-character path", long_path(base / "long.tar")),
        ]
        for label, archive in cases:
            print(json.dumps({"case": label, **run(archive)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Collect environment evidence from an image archive, without a container runtime.

Reads what ``docker save`` writes (``manifest.json``: ``Config`` and ``Layers``) or an OCI
image layout (``index.json`` -> manifest -> config and layer blobs), plain or compressed
(gzip, bzip2, xz). The layers are applied in order as runtimes extract them
(:mod:`prover.environment.layers`; where runtimes build two different trees, only what
both hold is claimed). The config's ``WorkingDir`` (``/`` when empty) and
``User`` (``root`` when empty) become ``workdir`` and ``user``/``group``.

Time and memory are linear in the archive: every member's declared size is charged to a
budget of :data:`EXPANSION_FLOOR` plus :data:`EXPANSION_RATIO` times the archive's size
*before* it is read or skipped, a compressed archive is listed and expanded in one pass
into a temporary file (random access into a compressed stream would re-read it for every
layer), extended tar headers are bounded before tarfile reads them whole, an
uncompressed layer is skipped through by seeking, and each entry is one walk down the
tree. Limits fail with one line naming them: archive members, layers, entries, declared
sizes, path and name lengths (``PATH_MAX``, ``NAME_MAX``: no runtime extracts longer),
JSON size and nesting, index nesting.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any

from prover.environment.accounts import MAX_ACCOUNT_FILE_BYTES
from prover.environment.collect import CollectError
from prover.environment.layers import Node, Worlds, agree, directory
from prover.environment.writer import SKIPPED, document

MAX_LAYERS = 256
MAX_ENTRIES = 1_000_000
MAX_MEMBERS = 10_000
MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_PATH_BYTES = 4096  # PATH_MAX, with the terminating NUL: a longer path fails to extract
MAX_NAME_BYTES = 255  # NAME_MAX
MAX_INDEX_DEPTH = 2
EXPANSION_FLOOR = 1024 * 1024 * 1024
EXPANSION_RATIO = 64
ACCOUNT_NAMES = ("passwd", "group")
MAX_HEADER_BYTES = 64 * 1024
MAX_HEADER_CHAIN = 8
_EXTENDED = (
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
)
Progress = Callable[[str], None]
_COMPRESSED = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))
_DECODE_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError)


def _shown(name: str) -> str:
    return repr(name if len(name) <= 160 else name[:160] + "...")


class _Header(tarfile.TarInfo):
    """A tar header whose extended headers (PAX records, GNU long names) are bounded before
    tarfile reads them whole into memory, and may not chain more than a few deep (tarfile
    reads a chain recursively)."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in _EXTENDED:
            chain = getattr(tarfile_, "_extended_chain", 0) + 1
            tarfile_._extended_chain = chain  # type: ignore[attr-defined]
            if self.size > MAX_HEADER_BYTES or chain > MAX_HEADER_CHAIN:
                raise CollectError(
                    f"an extended tar header of {self.size} bytes (chain of {chain}): past "
                    f"the limits ({MAX_HEADER_BYTES} bytes, {MAX_HEADER_CHAIN} in a row)"
                )
        else:
            tarfile_._extended_chain = 0  # type: ignore[attr-defined]
        return super()._proc_member(tarfile_)  # type: ignore[misc]


class Budget:
    """What the collection may still read: declared bytes and entries."""

    def __init__(self, archive_bytes: int) -> None:
        self.limit = EXPANSION_FLOOR + EXPANSION_RATIO * archive_bytes
        self.archive_bytes = archive_bytes
        self.left = self.limit
        self.entries = MAX_ENTRIES

    def charge(self, size: int, what: str, names: int = 0) -> None:
        """Spend a header, ``names`` bytes of (long) names and ``size`` bytes of data."""
        self.left -= 512 + names + max(size, 0)
        if self.left < 0:
            raise CollectError(
                f"{what} declares {size} bytes: past the collector's budget of {self.limit} "
                f"bytes ({EXPANSION_FLOOR} + {EXPANSION_RATIO} x the archive's "
                f"{self.archive_bytes} bytes), refused before reading it"
            )


class _Tee:
    """A decompressed stream that also writes what is read to ``copy``, within budget."""

    def __init__(self, source: IO[bytes], copy: IO[bytes], budget: Budget) -> None:
        self._source, self._copy, self._budget = source, copy, budget

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size if size >= 0 else 1024 * 1024)
        self._budget.left -= len(data)
        if self._budget.left < 0:
            raise CollectError(
                f"the compressed image archive expands past the collector's budget of "
                f"{self._budget.limit} bytes ({EXPANSION_FLOOR} + {EXPANSION_RATIO} x its "
                f"{self._budget.archive_bytes} bytes)"
            )
        self._copy.write(data)
        return data


class Archive:
    """The outer archive's members by name (``./`` dropped), read once with limits."""

    def __init__(self, path: str, budget: Budget) -> None:
        self._temp: IO[bytes] | None = None
        self.members: dict[str, tarfile.TarInfo] = {}
        try:
            with open(path, "rb") as handle:
                magic = handle.read(6)
            opener = next((o for m, o in _COMPRESSED if magic.startswith(m)), None)
            if opener is None:
                self.tar = tarfile.open(path, mode="r:", tarinfo=_Header)
                self._list(self.tar, budget)
                return
            # One pass: list the members from the decompressed stream (refusing early)
            # while keeping a copy for the random access the layers need.
            self._temp = tempfile.TemporaryFile()
            with opener(path, "rb") as source:
                stream = _Tee(source, self._temp, budget)
                with tarfile.open(fileobj=stream, mode="r|", tarinfo=_Header) as listing:
                    self._list(listing, budget)
                while stream.read(1024 * 1024):
                    pass
            self._temp.seek(0)
            self.tar = tarfile.open(fileobj=self._temp, mode="r:", tarinfo=_Header)
        except CollectError:
            self.close()
            raise
        except (*_DECODE_ERRORS, ValueError) as exc:
            self.close()
            raise CollectError(f"cannot read image archive '{path}': {exc}") from None

    def _list(self, tar: tarfile.TarFile, budget: Budget) -> None:
        while (member := tar.next()) is not None:
            if len(self.members) >= MAX_MEMBERS:
                raise CollectError(f"the image archive has more than {MAX_MEMBERS} members")
            budget.charge(member.size, f"archive member {_shown(member.name)}")
            name = member.name[2:] if member.name.startswith("./") else member.name
            self.members[name] = member

    def close(self) -> None:
        tar = getattr(self, "tar", None)
        if tar is not None:
            tar.close()
        if self._temp is not None:
            self._temp.close()

    def file(self, name: str) -> tarfile.TarInfo:
        member = self.members.get(name[2:] if name.startswith("./") else name)
        if member is None or not member.isfile():
            raise CollectError(f"the archive has no file {_shown(name)}")
        return member

    def open(self, name: str) -> IO[bytes]:
        handle = self.tar.extractfile(self.file(name))
        if handle is None:
            raise CollectError(f"{_shown(name)} in the archive is not a file")
        return handle

    def json(self, name: str) -> Any:
        if self.file(name).size > MAX_JSON_BYTES:
            raise CollectError(
                f"{_shown(name)} in the archive is larger than {MAX_JSON_BYTES} bytes"
            )
        try:
            return json.loads(self.open(name).read(MAX_JSON_BYTES + 1))
        except RecursionError:
            raise CollectError(f"{_shown(name)} in the archive is nested too deeply") from None
        except ValueError as exc:
            raise CollectError(f"{_shown(name)} in the archive is not valid JSON: {exc}") from None


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a field of the wrong type is
    then missing, and the missing field is what the error names)."""
    return value if isinstance(value, dict) else {}


def _blob(digest: Any) -> str:
    if not isinstance(digest, str) or ":" not in digest:
        raise CollectError(f"invalid digest {digest!r} in the image manifest")
    algorithm, value = digest.split(":", 1)
    if not algorithm.isalnum() or not value.isalnum():
        raise CollectError(f"invalid digest {digest!r} in the image manifest")
    return f"blobs/{algorithm}/{value}"


def _oci_manifest(archive: Archive, index: Any, depth: int = 0) -> tuple[str, list[str]]:
    manifests = index.get("manifests") if isinstance(index, dict) else None
    if not isinstance(manifests, list) or not manifests:
        raise CollectError("index.json lists no image manifest")

    def linux_amd64(m: Any) -> bool:
        platform = _dict(m).get("platform")
        return (
            _dict(platform).get("os") == "linux" and _dict(platform).get("architecture") == "amd64"
        )

    chosen = next((m for m in manifests if linux_amd64(m)), manifests[0])
    data = archive.json(_blob(_dict(chosen).get("digest")))
    if isinstance(data, dict) and "manifests" in data:
        if depth >= MAX_INDEX_DEPTH:
            raise CollectError(f"image index nested more than {MAX_INDEX_DEPTH} deep")
        return _oci_manifest(archive, data, depth + 1)
    if not isinstance(data, dict) or not isinstance(data.get("layers"), list):
        raise CollectError("the image manifest has no layers")
    config = _blob(_dict(data.get("config")).get("digest"))
    return config, [_blob(_dict(layer).get("digest")) for layer in data["layers"]]


def _layout(archive: Archive) -> tuple[str, list[str]]:
    """The config and layer member names, from docker save's manifest or the OCI index."""
    if "manifest.json" in archive.members:
        manifest = archive.json("manifest.json")
        if not isinstance(manifest, list) or not manifest or not isinstance(manifest[0], dict):
            raise CollectError("manifest.json does not describe an image")
        entry = manifest[0]
        layers = entry.get("Layers")
        if not isinstance(entry.get("Config"), str) or not isinstance(layers, list):
            raise CollectError("manifest.json has no Config and Layers")
        return entry["Config"], [str(layer) for layer in layers]
    if "index.json" in archive.members:
        return _oci_manifest(archive, archive.json("index.json"))
    raise CollectError("not an image archive: no manifest.json (docker save) or index.json (OCI)")


def _user(config: Any) -> tuple[str | None, str | None, str | None]:
    """(workdir, user, group) from the image config."""
    settings = _dict(_dict(config).get("config"))
    workdir = settings.get("WorkingDir") or "/"
    spec = settings.get("User") or "root"
    user, _, group = str(spec).partition(":")
    return str(workdir), user or "root", group or None


def _text(layer: tarfile.TarFile, member: tarfile.TarInfo) -> str | None:
    """An account file's text; None when the runtime would refuse it (too large, not
    UTF-8)."""
    if member.size > MAX_ACCOUNT_FILE_BYTES:
        return None
    handle = layer.extractfile(member)
    if handle is None:
        return None
    try:
        return handle.read().decode("utf-8")
    except UnicodeDecodeError:
        return None


def _entry(
    member: tarfile.TarInfo, number: int
) -> tuple[list[str], Callable[[], Node] | None, list[str] | None]:
    """One layer entry as (path, maker of the node to place, hard link target)."""
    name = member.name
    where = f"layer {number} entry {_shown(name)}"
    if len(name.encode("utf-8", "surrogateescape")) >= MAX_PATH_BYTES:
        raise CollectError(
            f"layer {number} has an entry path of {len(name)} characters: longer than "
            f"PATH_MAX ({MAX_PATH_BYTES} bytes), which no runtime can extract"
        )
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise CollectError(f"a layer entry leaves the root: {_shown(name)}")
    if any(len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for p in parts):
        raise CollectError(f"{where}: a name longer than NAME_MAX ({MAX_NAME_BYTES} bytes)")
    if member.issym():
        target = member.linkname
        if not target or len(target.encode("utf-8", "surrogateescape")) >= MAX_PATH_BYTES:
            raise CollectError(f"{where}: a symlink target no runtime can create")
        return parts, lambda: Node("l", number, target=target), None
    if member.islnk():
        link = [p for p in member.linkname.split("/") if p not in ("", ".")]
        if ".." in link:
            raise CollectError(f"{where}: a hard link leaves the root")
        return parts, None, link
    if member.isdir():
        return parts, lambda: directory(number), None
    return parts, lambda: Node("f", number), None


def _apply_layer(handle: IO[bytes], number: int, worlds: Worlds, budget: Budget) -> int:
    """Apply one layer's entries to the trees; the number of entries."""
    magic = handle.read(6)
    handle.seek(0)
    compressed = any(magic.startswith(m) for m, _ in _COMPRESSED)
    count = 0
    worlds.begin(number)
    try:
        mode = "r|*" if compressed else "r:"
        with tarfile.open(fileobj=handle, mode=mode, tarinfo=_Header) as layer:
            while (member := layer.next()) is not None:
                count += 1
                budget.entries -= 1
                if budget.entries < 0:
                    raise CollectError(f"the image has more than {MAX_ENTRIES} entries")
                budget.charge(
                    member.size,
                    f"layer {number} entry {_shown(member.name)}",
                    len(member.name) + len(member.linkname),
                )
                if count % 4096 == 0:
                    layer.members = []  # tarfile keeps every header otherwise
                parts, make, link = _entry(member, number)
                if not parts:
                    continue
                text: list[str | None] = []
                for went, node in worlds.add(parts, make, link):
                    if node is None or not member.isfile() or went != ["etc"]:
                        continue
                    if parts[-1] in ACCOUNT_NAMES:
                        if not text:
                            text.append(_text(layer, member))
                        node.text = text[0]
    except _DECODE_ERRORS as exc:
        raise CollectError(f"layer {number} is not a readable tar archive: {exc}") from None
    worlds.end()
    return count


def collect_image(
    path: str,
    *,
    progress: Progress | None = None,
    workdir: str | None = None,
    user: str | None = None,
) -> dict[str, Any]:
    """The evidence document (data) of the image archive at ``path``; ``workdir`` and
    ``user`` (``name``, ``uid``, ``name:group``) replace the config's."""
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise CollectError(f"cannot read image archive '{path}': {exc.strerror}") from None
    budget = Budget(size)
    archive = Archive(path, budget)
    try:
        config_name, layers = _layout(archive)
        if len(layers) > MAX_LAYERS:
            raise CollectError(f"the image has more than {MAX_LAYERS} layers")
        config_workdir, config_user, group = _user(archive.json(config_name))
        if user is not None:
            group = None
        workdir = workdir or config_workdir
        user = user or config_user
        worlds = Worlds()
        for number, name in enumerate(layers, start=1):
            forked = worlds.forked
            count = _apply_layer(archive.open(name), number, worlds, budget)
            if progress is not None:
                progress(f"layer {number}/{len(layers)}: {count} entries")
                if worlds.forked is not None and forked is None:
                    progress(worlds.forked)
    finally:
        archive.close()
    tree = worlds.trees[0]
    incomplete = set(SKIPPED)
    passwd, group_text = tree.read("/etc/passwd"), tree.read("/etc/group")
    if len(worlds.trees) == 1:
        symlinks = {p: node.target for p, node in tree.walk() if node.kind == "l"}
    else:
        other = worlds.trees[1]
        symlinks, differ = agree(tree, other)
        incomplete |= differ
        passwd = passwd if passwd == other.read("/etc/passwd") else None
        group_text = group_text if group_text == other.read("/etc/group") else None
    if workdir is not None and not workdir.startswith("/"):
        workdir = None

    def children(directory_: str) -> Iterator[tuple[str, bool]]:
        node = tree.lookup([p for p in directory_.split("/") if p])
        if node is None or node.children is None:
            return
        prefix = "" if directory_ == "/" else directory_
        for name, child in node.children.items():
            if child.kind != "l":
                yield prefix + "/" + name, child.kind == "d"

    return document(
        symlinks=symlinks,
        incomplete=incomplete,
        children=children,
        passwd=passwd,
        group=group_text,
        workdir=workdir,
        user=user,
        group_name=group,
        note=progress,
        exists=lambda path: all(t.resolve(path) is not None for t in worlds.trees),
    )

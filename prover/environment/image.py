"""Collect environment evidence from an image archive, without a container runtime.

Reads what ``docker save`` writes (``manifest.json``: ``Config`` and ``Layers``) or an OCI
image layout (``index.json`` -> manifest -> config and layer blobs). The layers are
applied in order to a tree of paths: a ``.wh.NAME`` entry deletes ``NAME`` from the
layers below, ``.wh..wh..opq`` empties its directory of them, a non-directory hides what
was below it. The config's ``WorkingDir`` (``/`` when empty) and ``User`` (``root`` when
empty) become ``workdir`` and ``user``/``group``. Everything is bounded: layers, entries
and the size of each JSON document and account file read.
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from prover.environment.collect import CollectError
from prover.environment.paths import MAX_HOPS
from prover.environment.writer import SKIPPED, document

MAX_LAYERS = 256
MAX_ENTRIES = 1_000_000
MAX_JSON_BYTES = 4 * 1024 * 1024
ACCOUNT_FILES = ("/etc/passwd", "/etc/group")
Progress = Callable[[str], None]


_NO_CHILDREN: dict[str, _Node] = {}


@dataclass(slots=True)
class _Node:
    kind: str  # "d" directory, "f" file (anything else), "l" symlink
    target: str = ""
    text: str | None = None
    children: dict[str, _Node] = field(default_factory=lambda: _NO_CHILDREN)

    def __post_init__(self) -> None:
        if self.kind == "d":
            self.children = {}  # only directories hold entries (memory: one per image path)


def _clean(name: str) -> list[str] | None:
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    return parts


class _Tree:
    def __init__(self) -> None:
        self.root = _Node("d")
        self.entries = 0

    def _dir(self, parts: list[str]) -> _Node:
        node = self.root
        for name in parts:
            child = node.children.get(name)
            if child is None or child.kind != "d":
                child = _Node("d")
                node.children[name] = child
            node = child
        return node

    def lookup(self, parts: list[str]) -> _Node | None:
        node: _Node | None = self.root
        for name in parts:
            if node is None or node.kind != "d":
                return None
            node = node.children.get(name)
        return node

    def apply(self, entries: list[tuple[list[str], _Node]]) -> None:
        """One layer: its whiteouts on the layers below, then its entries."""
        for parts, _ in entries:
            name = parts[-1]
            if name == ".wh..wh..opq":
                parent = self.lookup(parts[:-1])
                if parent is not None and parent.kind == "d":
                    parent.children.clear()
            elif name.startswith(".wh."):
                parent = self.lookup(parts[:-1])
                if parent is not None and parent.kind == "d":
                    parent.children.pop(name[4:], None)
        for parts, node in entries:
            if parts[-1].startswith(".wh."):
                continue
            parent = self._dir(parts[:-1])
            old = parent.children.get(parts[-1])
            if node.kind == "d" and old is not None and old.kind == "d":
                continue  # directories merge
            parent.children[parts[-1]] = node
            self.entries += 1

    def read(self, path: str) -> str | None:
        """An account file's text, following the tree's own symlinks."""
        parts = [p for p in path.split("/") if p]
        done: list[str] = []
        hops = 0
        while parts:
            name = parts.pop(0)
            if name == "..":
                done = done[:-1]
                continue
            node = self.lookup([*done, name])
            if node is None:
                return None
            if node.kind == "l":
                hops += 1
                if hops > MAX_HOPS:
                    return None
                if node.target.startswith("/"):
                    done = []
                parts = [p for p in node.target.split("/") if p not in ("", ".")] + parts
                continue
            done.append(name)
        node = self.lookup(done)
        return node.text if node is not None else None

    def walk(self) -> Iterator[tuple[str, _Node]]:
        stack: list[tuple[str, _Node]] = [("/", self.root)]
        while stack:
            path, node = stack.pop()
            yield path, node
            for name, child in node.children.items():
                stack.append(((path.rstrip("/")) + "/" + name, child))


def _json(archive: tarfile.TarFile, name: str) -> Any:
    member = _member(archive, name)
    if member.size > MAX_JSON_BYTES:
        raise CollectError(f"'{name}' in the archive is larger than {MAX_JSON_BYTES} bytes")
    handle = archive.extractfile(member)
    if handle is None:
        raise CollectError(f"'{name}' in the archive is not a file")
    try:
        return json.loads(handle.read(MAX_JSON_BYTES + 1))
    except ValueError as exc:
        raise CollectError(f"'{name}' in the archive is not valid JSON: {exc}") from None


def _member(archive: tarfile.TarFile, name: str) -> tarfile.TarInfo:
    for candidate in (name, "./" + name):
        try:
            member = archive.getmember(candidate)
        except KeyError:
            continue
        if member.isfile():
            return member
    raise CollectError(f"the archive has no file '{name}'")


def _blob(digest: Any) -> str:
    if not isinstance(digest, str) or ":" not in digest:
        raise CollectError(f"invalid digest {digest!r} in the image manifest")
    algorithm, value = digest.split(":", 1)
    if not algorithm.isalnum() or not value.isalnum():
        raise CollectError(f"invalid digest {digest!r} in the image manifest")
    return f"blobs/{algorithm}/{value}"


def _oci_manifest(archive: tarfile.TarFile, index: Any, depth: int = 0) -> tuple[str, list[str]]:
    manifests = index.get("manifests") if isinstance(index, dict) else None
    if not isinstance(manifests, list) or not manifests:
        raise CollectError("index.json lists no image manifest")

    def linux_amd64(m: Any) -> bool:
        platform = m.get("platform") or {} if isinstance(m, dict) else {}
        return platform.get("os") == "linux" and platform.get("architecture") == "amd64"

    chosen = next((m for m in manifests if linux_amd64(m)), manifests[0])
    data = _json(archive, _blob(chosen.get("digest") if isinstance(chosen, dict) else None))
    if isinstance(data, dict) and "manifests" in data:
        if depth > 2:
            raise CollectError("image index nested too deeply")
        return _oci_manifest(archive, data, depth + 1)
    if not isinstance(data, dict) or not isinstance(data.get("layers"), list):
        raise CollectError("the image manifest has no layers")
    config = _blob((data.get("config") or {}).get("digest"))
    return config, [_blob(layer.get("digest")) for layer in data["layers"]]


def _layout(archive: tarfile.TarFile) -> tuple[str, list[str]]:
    """The config and layer member names, from docker save's manifest or the OCI index."""
    names = set(archive.getnames())
    if "manifest.json" in names or "./manifest.json" in names:
        manifest = _json(archive, "manifest.json")
        if not isinstance(manifest, list) or not manifest or not isinstance(manifest[0], dict):
            raise CollectError("manifest.json does not describe an image")
        entry = manifest[0]
        layers = entry.get("Layers")
        if not isinstance(entry.get("Config"), str) or not isinstance(layers, list):
            raise CollectError("manifest.json has no Config and Layers")
        return entry["Config"], [str(layer) for layer in layers]
    if "index.json" in names or "./index.json" in names:
        return _oci_manifest(archive, _json(archive, "index.json"))
    raise CollectError("not an image archive: no manifest.json (docker save) or index.json (OCI)")


def _layer_entries(
    handle: IO[bytes], budget: list[int], tree: _Tree
) -> list[tuple[list[str], _Node]]:
    entries: list[tuple[list[str], _Node]] = []
    seen: dict[str, _Node] = {}
    try:
        with tarfile.open(fileobj=handle, mode="r|*") as layer:
            for member in layer:
                budget[0] -= 1
                if budget[0] < 0:
                    raise CollectError(f"the image has more than {MAX_ENTRIES} entries")
                parts = _clean(member.name)
                if parts is None:
                    raise CollectError(f"a layer entry leaves the root: {member.name!r}")
                if not parts:
                    continue
                linked = None
                if member.islnk():  # a hard link is whatever it links to, a symlink too
                    target = _clean(member.linkname) or []
                    linked = seen.get("/".join(target)) or tree.lookup(target)
                if member.issym():
                    node = _Node("l", target=member.linkname)
                elif linked is not None and linked.kind == "l":
                    node = _Node("l", target=linked.target)
                elif member.isdir():
                    node = _Node("d")
                else:
                    node = _Node("f")
                    path = "/" + "/".join(parts)
                    if path in ACCOUNT_FILES and member.isfile() and member.size <= MAX_JSON_BYTES:
                        data = layer.extractfile(member)
                        node.text = data.read().decode("utf-8", "replace") if data else None
                entries.append((parts, node))
                seen["/".join(parts)] = node
    except tarfile.TarError as exc:
        raise CollectError(f"a layer is not a readable tar archive: {exc}") from None
    return entries


def _user(config: Any) -> tuple[str | None, str | None, str | None]:
    """(workdir, user, group) from the image config."""
    settings = config.get("config") or {} if isinstance(config, dict) else {}
    workdir = settings.get("WorkingDir") or "/"
    spec = settings.get("User") or "root"
    user, _, group = str(spec).partition(":")
    return str(workdir), user or "root", group or None


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
        archive = tarfile.open(path, "r:*")
    except (OSError, tarfile.TarError) as exc:
        raise CollectError(f"cannot read image archive '{path}': {exc}") from None
    with archive:
        config_name, layers = _layout(archive)
        if len(layers) > MAX_LAYERS:
            raise CollectError(f"the image has more than {MAX_LAYERS} layers")
        config_workdir, config_user, group = _user(_json(archive, config_name))
        if user is not None:
            group = None
        workdir = workdir or config_workdir
        user = user or config_user
        tree = _Tree()
        budget = [MAX_ENTRIES]
        for number, name in enumerate(layers, start=1):
            handle = archive.extractfile(_member(archive, name))
            if handle is None:
                raise CollectError(f"layer '{name}' is not a file")
            entries = _layer_entries(handle, budget, tree)
            tree.apply(entries)
            if progress is not None:
                progress(f"layer {number}/{len(layers)}: {len(entries)} entries")
    symlinks = {
        p: node.target
        for p, node in tree.walk()
        if node.kind == "l" and node.target and "\x00" not in node.target
    }
    incomplete = set(SKIPPED)
    if workdir is not None and not workdir.startswith("/"):
        workdir = None

    def children(directory: str) -> Iterator[tuple[str, bool]]:
        node = tree.lookup([p for p in directory.split("/") if p])
        if node is None:
            return
        for name, child in node.children.items():
            if child.kind != "l":
                yield (directory.rstrip("/") + "/" + name), child.kind == "d"

    return document(
        symlinks=symlinks,
        incomplete=incomplete,
        children=children,
        passwd=tree.read("/etc/passwd"),
        group=tree.read("/etc/group"),
        workdir=workdir,
        user=user,
        group_name=group,
    )

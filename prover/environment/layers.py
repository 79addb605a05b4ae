"""Image layers applied to a tree of paths as container runtimes extract them.

Every runtime OpenShell drives extracts a layer entry by entry, in the order of the tar
stream, and resolves each entry's parent directory through the symlinks already
extracted: containerd's ``applyNaive`` (``pkg/archive/tar.go``: ``fs.RootPath`` on the
parent, ``mkparent`` for missing directories, ``os.Lstat`` + ``RemoveAll`` unless a
directory meets a directory, ``hardlinkRootPath`` for hard links) and moby's
``UnpackLayer`` (``pkg/archive/diff.go``, run chrooted, so the kernel resolves the same
way). So an entry beneath a symlink of the same layer lands where the link points (an
absolute target from the image's root, ``..`` stopping at the root) and the symlink stays a
symlink; a hard link to a symlink is a symlink (``link(2)`` does not follow).

One case splits the runtimes in two, and both are followed: an entry whose parent passes
through a symlink of a *lower* layer. Overlayfs snapshotters extract each layer alone into
its own directory (containerd ``diff/apply/apply_linux.go`` passes the upper directory;
moby's overlay2 ``ApplyDiff`` likewise), where the link is absent, so the entry's parents
become directories that hide the link in the mounted image; extraction into the mounted
image (containerd's native snapshotter, overlay in a user namespace, moby's naive diff)
follows the link. The same image then has two trees (bazel-contrib/rules_oci#857,
NixOS/nixpkgs#107021): from that entry on, :class:`Worlds` applies the layers to both (an
``"overlay"`` and a ``"merged"`` tree) and :func:`agree` keeps only what both hold; every
path where they differ is left unclaimed.

Where the runtimes differ otherwise, the collector refuses the image with the reason:

* a whiteout of an entry of its own layer (the OCI layer spec says whiteouts apply to lower
  layers only; ``RemoveAll`` removes it, the overlay conversion does not);
* an opaque marker (``.wh..wh..opq``) after directories the layer created implicitly
  beneath it (the naive walk removes them with their contents, an overlay opaque
  directory keeps them);
* an entry replacing one of its own layer after the layer followed a symlink: containerd
  resolves each parent once per layer and remembers it (``cachedRootPath``), so a later
  entry may still go where a replaced link pointed; moby resolves afresh.

The work is bounded: :data:`MAX_NODES` paths, :data:`MAX_STEPS` components walked for one
entry (the kernel's own bound is 40 links of up to ``PATH_MAX`` each), and
:data:`STEPS_PER_ENTRY` per entry on average beyond the first :data:`FREE_STEPS`, so the
walks stay linear in the archive.

A whiteout ``.wh.NAME`` removes ``NAME`` of the layers below; an opaque marker hides
everything of the layers below in its directory (applied when the layer ends: overlayfs
applies it as an attribute, whatever its place in the stream); a non-directory replaces
what was there; directories merge. A parent that is a file of a lower layer becomes a
directory (overlayfs; the naive extraction fails there, so no container sees otherwise).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prover.environment.collect import CollectError
from prover.environment.paths import MAX_HOPS

MAX_NODES = 2_000_000
MAX_STEPS = 8192
STEPS_PER_ENTRY = 64
FREE_STEPS = 1_000_000
OPAQUE = ".wh..wh..opq"
WHITEOUT = ".wh."


@dataclass(slots=True)
class Node:
    """One path of the image: ``kind`` "d" directory, "f" anything else, "l" symlink;
    ``layer`` is the last layer that wrote it or created it as a parent, ``made`` the
    entry ordinal at which that layer created it implicitly (0: written by an entry)."""

    kind: str
    layer: int
    target: str = ""
    text: str | None = None
    made: int = 0
    children: dict[str, Node] | None = None


def directory(layer: int, made: int = 0) -> Node:
    return Node("d", layer, made=made, children={})


class Diverge(Exception):
    """A single tree met a symlink of a lower layer on an entry's path: fork it."""


class Tree:
    """The image's tree; :meth:`begin`, :meth:`add` for each entry, :meth:`end` per layer.
    ``mode`` says what a symlink of a lower layer on an entry's path does: ``"single"``
    raises :class:`Diverge`, ``"overlay"`` hides it with a directory, ``"merged"`` follows
    it."""

    def __init__(self, mode: str = "single") -> None:
        self.mode = mode
        self.root = directory(0)
        self.nodes = 1
        self.steps = 0  # components walked
        self.walks = 0
        self._layer = 0
        self._ordinal = 0
        self._opaque: list[tuple[int, int, Node]] = []
        self._followed = False

    def begin(self, layer: int) -> None:
        self._layer, self._ordinal, self._opaque, self._followed = layer, 0, [], False

    def _grow(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise CollectError(f"the image's tree has more than {MAX_NODES} paths")

    def _refuse(self, what: str, why: str) -> CollectError:
        shown = what if len(what) <= 160 else what[:160] + "..."
        return CollectError(f"layer {self._layer} entry {shown!r}: {why}")

    def parent(self, parts: list[str], what: str) -> tuple[Node, list[str]]:
        """The directory ``parts`` names once the runtime resolves it, and its path."""
        layer = self._layer
        stack = [self.root]
        names: list[str] = []
        queue = deque(parts)
        hops = 0
        steps = 0
        while queue:
            steps += 1
            if steps > MAX_STEPS:
                raise self._refuse(what, f"resolving its path takes more than {MAX_STEPS} steps")
            name = queue.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                if names:
                    names.pop()
                    stack.pop()
                continue
            current = stack[-1]
            assert current.children is not None
            node = current.children.get(name)
            if node is not None and node.kind == "l":
                if node.layer != layer and self.mode == "single":
                    where = "/" + "/".join([*names, name])
                    raise Diverge(
                        f"layer {layer} entry {what[:160]!r} lies beneath {where!r}, a symlink "
                        f"of layer {node.layer}: runtimes differ there (overlayfs extraction "
                        "hides the link with a directory, extraction into the mounted image "
                        "follows it); paths where the two differ are left unclaimed"
                    )
                if node.layer != layer and self.mode == "overlay":
                    node = directory(layer, self._ordinal)  # hides the link
                    current.children[name] = node
                    self._grow()
                    stack.append(node)
                    names.append(name)
                    continue
                hops += 1
                if hops > MAX_HOPS:
                    raise self._refuse(what, f"more than {MAX_HOPS} symlinks on its path")
                self._followed = True
                if node.target.startswith("/"):
                    del stack[1:]
                    names.clear()
                queue.extendleft(reversed(node.target.split("/")))
                continue
            if node is None or node.kind != "d":
                if node is not None and node.layer == layer:
                    where = "/" + "/".join([*names, name])
                    raise self._refuse(what, f"its parent {where!r} is not a directory")
                node = directory(layer, self._ordinal)
                current.children[name] = node
                self._grow()
            elif node.layer != layer:
                node.layer, node.made = layer, self._ordinal  # copied up as a parent
            stack.append(node)
            names.append(name)
        self.steps += steps
        self.walks += 1
        if self.steps > FREE_STEPS + STEPS_PER_ENTRY * self.walks:
            raise self._refuse(
                what,
                f"resolving the layers' paths takes more than {STEPS_PER_ENTRY} steps an "
                "entry on average (symlink chains)",
            )
        return stack[-1], names

    def add(self, parts: list[str], node: Node | None, link: list[str] | None = None) -> list[str]:
        """Apply one entry (``parts`` cleaned, not empty): ``node`` to place, or a hard link
        to ``link``; whiteouts by name. Returns the path of the directory it went to."""
        self._ordinal += 1
        what = "/".join(parts)
        parent, names = self.parent(parts[:-1], what)
        assert parent.children is not None
        name = parts[-1]
        if name == OPAQUE:
            self._opaque.append((len(names), self._ordinal, parent))
            return names
        if name.startswith(WHITEOUT):
            old = parent.children.get(name[len(WHITEOUT) :])
            if old is not None:
                if old.layer == self._layer:
                    raise self._refuse(what, "whites out an entry of its own layer")
                del parent.children[name[len(WHITEOUT) :]]
            return names
        if link is not None:
            node = self._hard_link(link, what)
        assert node is not None
        old = parent.children.get(name)
        if node.kind == "d" and old is not None and old.kind == "d":
            old.layer, old.made = self._layer, 0  # directories merge
            return names
        if old is not None and old.layer == self._layer and self._followed:
            raise self._refuse(
                what,
                "replaces an entry of its own layer after the layer followed a symlink; "
                "runtimes differ here (containerd resolves each parent once per layer, "
                "moby afresh)",
            )
        parent.children[name] = node
        self._grow()
        return names

    def _hard_link(self, link: list[str], what: str) -> Node:
        if not link:
            raise self._refuse(what, "is a hard link to the root")
        directory_, _ = self.parent(link[:-1], what)
        assert directory_.children is not None
        target = directory_.children.get(link[-1])
        if target is None or target.kind == "d":
            why = "a directory" if target is not None else "a missing entry"
            raise self._refuse(what, f"is a hard link to {why}")
        return Node(target.kind, self._layer, target=target.target, text=target.text)

    def end(self) -> None:
        """Apply the layer's opaque markers: hide every path of the layers below beneath
        each marked directory (shallowest first, each directory visited once)."""
        layer = self._layer
        marks: dict[int, int] = {}
        for _, ordinal, node in self._opaque:
            marks[id(node)] = max(marks.get(id(node), 0), ordinal)
        visited: set[int] = set()
        for _, _ordinal, start in sorted(self._opaque, key=lambda item: item[0]):
            pending = [(start, marks[id(start)])]
            while pending:
                node, mark = pending.pop()
                if id(node) in visited:
                    continue
                visited.add(id(node))
                assert node.children is not None
                for name, child in list(node.children.items()):
                    self.steps += 1
                    if child.layer != layer:
                        del node.children[name]
                    elif child.made and child.made < mark:
                        raise CollectError(
                            f"layer {layer}: an opaque marker follows directories the layer "
                            "created implicitly beneath it; runtimes differ there (overlayfs "
                            "keeps them, extraction into the mounted image removes them)"
                        )
                    elif child.kind == "d":
                        pending.append((child, max(mark, marks.get(id(child), 0))))
        self._opaque = []

    def lookup(self, parts: list[str]) -> Node | None:
        node: Node | None = self.root
        for name in parts:
            if node is None or node.children is None:
                return None
            node = node.children.get(name)
        return node

    def read(self, path: str) -> str | None:
        """An account file's text, following the tree's own symlinks."""
        node = self.resolve(path)
        return node.text if node is not None and node.kind == "f" else None

    def resolve(self, path: str) -> Node | None:
        """What ``path`` names once the tree's own symlinks are followed, or None."""
        parts = deque(p for p in path.split("/") if p)
        done: list[str] = []
        hops = 0
        while parts:
            name = parts.popleft()
            if name in (".", ".."):
                if name == ".." and done:
                    done.pop()
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
                parts.extendleft(reversed([p for p in node.target.split("/") if p]))
                continue
            done.append(name)
        return self.lookup(done)

    def clone(self, mode: str) -> Tree:
        """A copy of the tree and of the layer under way, in ``mode``."""
        twin = Tree(mode)
        twin.nodes, twin.steps, twin.walks = self.nodes, self.steps, self.walks
        twin._layer, twin._ordinal, twin._followed = self._layer, self._ordinal, self._followed
        copies: dict[int, Node] = {}
        pending = [(self.root, twin.root)]
        copies[id(self.root)] = twin.root
        twin.root.layer, twin.root.made = self.root.layer, self.root.made
        while pending:
            source, copy = pending.pop()
            assert source.children is not None and copy.children is not None
            for name, child in source.children.items():
                new = Node(child.kind, child.layer, child.target, child.text, child.made)
                if child.children is not None:
                    new.children = {}
                    copies[id(child)] = new
                    pending.append((child, new))
                copy.children[name] = new
        twin._opaque = [
            (depth, o, copies[id(n)]) for depth, o, n in self._opaque if id(n) in copies
        ]
        return twin

    def walk(self) -> Iterator[tuple[str, Node]]:
        stack: list[tuple[str, Node]] = [("/", self.root)]
        while stack:
            path, node = stack.pop()
            yield path, node
            prefix = "" if path == "/" else path
            for name, child in (node.children or {}).items():
                stack.append((prefix + "/" + name, child))


class Worlds:
    """One tree while every runtime agrees; an overlay and a merged tree from the first
    entry beneath a lower layer's symlink on."""

    def __init__(self) -> None:
        self.trees = [Tree()]
        self.forked: str | None = None  # why there are two trees

    def begin(self, layer: int) -> None:
        for tree in self.trees:
            tree.begin(layer)

    def add(
        self, parts: list[str], make: Callable[[], Node] | None, link: list[str] | None
    ) -> list[tuple[list[str], Node | None]]:
        """Apply one entry to every tree; per tree, the directory it went to and the node
        placed (``make`` makes one per tree; None for a hard link)."""
        if len(self.trees) == 1:
            node = make() if make is not None else None
            try:
                return [(self.trees[0].add(parts, node, link), node)]
            except Diverge as fork:
                self.forked = str(fork)
                single = self.trees[0]
                self.trees = [single.clone("overlay"), single.clone("merged")]
        placed = []
        for tree in self.trees:
            node = make() if make is not None else None
            placed.append((tree.add(parts, node, link), node))
        return placed

    def end(self) -> None:
        for tree in self.trees:
            tree.end()

    @property
    def steps(self) -> int:
        return sum(tree.steps for tree in self.trees)


def agree(one: Tree, other: Tree) -> tuple[dict[str, str], set[str]]:
    """The symlinks both trees hold alike, and every path where they differ (a path in one
    only, of another kind, or a link with another target): claimed nowhere."""
    symlinks: dict[str, str] = {}
    differ: set[str] = set()
    pending = [("", one.root, other.root)]
    while pending:
        prefix, a, b = pending.pop()
        assert a.children is not None and b.children is not None
        for name in a.children.keys() | b.children.keys():
            x, y = a.children.get(name), b.children.get(name)
            path = prefix + "/" + name
            if x is None or y is None or x.kind != y.kind or x.target != y.target:
                differ.add(path)
            elif x.kind == "l":
                symlinks[path] = x.target
            elif x.kind == "d":
                pending.append((path, x, y))
    return symlinks, differ

"""The finite set of concrete actions on which two sandboxes are compared.

Every value that can change a decision is drawn from the two policies and the image:
each listed path, its children and its ancestors; every image path; the workdir and
the baseline paths; every executable the image holds and every one a policy names
(resolved), alone and as an ancestor; hosts instantiated from each endpoint's pattern
and one matching none; each endpoint port; a public, a private and a loopback address;
methods, paths and query values instantiated from every matcher. Executables and
host/port pairs that no rule tells apart are represented by one of them.
"""

from __future__ import annotations

import re
from itertools import product

from tests.soundness.sandbox_oracle.filesystem import (
    GPU_BASELINE_READ_ONLY,
    GPU_BASELINE_READ_WRITE,
    PROXY_BASELINE_READ_ONLY,
    PROXY_BASELINE_READ_WRITE,
    normalize_path,
)
from tests.soundness.sandbox_oracle.image import Image, join, parent
from tests.soundness.sandbox_oracle.network import (
    Request,
    binary_allowed,
    canonical_path,
    endpoint_matches,
)
from tests.soundness.sandbox_oracle.policy import Policy
from tests.soundness.sandbox_oracle.sandbox import Sandbox

METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH")
IPS = ("93.184.216.34", "10.1.2.3", "127.0.0.1")
NEW = "oracle_new"


def _policies(*sandboxes: Sandbox) -> list[Policy]:
    return [s.policy for s in sandboxes if s.policy is not None]


def file_paths(image: Image, *sandboxes: Sandbox) -> list[str]:
    seeds = {*image.files, *image.dirs, *image.symlinks, "/"}
    seeds |= {*PROXY_BASELINE_READ_ONLY, *PROXY_BASELINE_READ_WRITE}
    seeds |= {*GPU_BASELINE_READ_ONLY, *GPU_BASELINE_READ_WRITE, "/dev/null"}
    if image.workdir:
        seeds.add(image.workdir)
    for policy in _policies(*sandboxes):
        if policy.filesystem is not None:
            for path in (*policy.filesystem[1], *policy.filesystem[2]):
                if path.startswith("/") and ".." not in path.split("/"):
                    seeds.add(normalize_path(path))
    out = set(seeds)
    for path in seeds:
        out.add(join(path, NEW))
        head = path
        while head != "/":
            head = parent(head)
            out.add(head)
    return sorted(out)


def _instances(pattern: str, sep: str) -> set[str]:
    pieces = re.split(r"(\*\*|\*|\?)", pattern)
    results = {""}
    for piece in pieces:
        if piece == "**":
            options = {"a", f"a{sep}b"} if sep == "." else {"", "a", f"a{sep}b"}
        elif piece == "*":
            options = {"a"} if sep == "." else {"", "a"}
        elif piece == "?":
            options = {"a"}
        else:
            options = {piece}
        results = {r + o for r in results for o in options}
    return results


def executables(image: Image, *sandboxes: Sandbox) -> list[str]:
    found = set(image.executables()) | {"/opt/oracle/unlisted"}
    for sandbox in sandboxes:
        for rule in sandbox.data:
            for b in rule.binaries:
                for inst in _instances(b, "/") if "*" in b else {b}:
                    real = image.resolve(inst)
                    found.add(real if real else inst)
    return sorted(p for p in found if is_possible_exe(image, p, sandboxes[0]))


def is_possible_exe(image: Image, path: str, sandbox: Sandbox | None = None) -> bool:
    """A ``/proc/<pid>/exe`` value: absolute, canonical (no component a symlink), not a
    directory, and either a file of the image or one ``sandbox``'s process may create
    (its nearest existing ancestor writable there; no sandbox given: any)."""
    if not path.startswith("/") or path != normalize_path(path) or path == "/":
        return False
    if path in image.files:
        return True
    if path in image.symlinks or path in image.dirs:
        return False
    head = parent(path)
    first_missing = path
    while head not in image.dirs:
        if head in image.symlinks or head in image.files:
            return False
        first_missing, head = head, parent(head)
    return sandbox is None or sandbox.allows_file("write", first_missing)


def can_run(image: Image, path: str, sandbox: Sandbox) -> bool:
    """``sandbox``'s workload can ``execve`` ``path``: a possible executable whose file
    its Landlock ruleset covers (``LANDLOCK_ACCESS_FS_EXECUTE`` is part of
    ``AccessFs::from_read``, which every rule grants; a created file lies beneath a
    writable rule)."""
    if not is_possible_exe(image, path, sandbox):
        return False
    return path not in image.files or sandbox.allows_file("read", path)


def _signature(items: list, key) -> list:  # type: ignore[no-untyped-def]
    seen: dict[object, object] = {}
    for item in items:
        seen.setdefault(key(item), item)
    return list(seen.values())


def network_space(
    image: Image, cand: Sandbox, bound: Sandbox, identity: bool
) -> tuple[list[tuple[str, tuple[str, ...]]], list[tuple[str, int]], list[tuple[str, str, tuple]]]:
    """(executable with ancestors, host and port, HTTP method/path/query) choices."""
    rules = [*cand.data, *bound.data]
    endpoints = [ep for r in rules for ep in r.endpoints]
    exes = executables(image, cand, bound)
    runnable = [e for e in exes if can_run(image, e, cand)]
    combos = [(e, ()) for e in runnable]
    combos += [(e, (a,)) for e in runnable[:12] for a in exes[:12] if a != e]
    combos = _signature(
        combos,
        lambda c: tuple(
            binary_allowed(r, Request(c[0], c[1], "", 0, "", "connect"), identity) for r in rules
        ),
    )
    hosts = {"unmatched.oracle.invalid"}
    for ep in endpoints:
        hosts |= _instances(ep.host.lower(), ".") if "*" in ep.host else {ep.host}
    ports = sorted({p for ep in endpoints for p in ep.ports} | {1})
    pairs = _signature(
        [(h, p) for h in sorted(hosts) for p in ports],
        lambda hp: tuple(
            (endpoint_matches(ep, Request("", (), hp[0], hp[1], "", "connect")), ep.host == hp[0])
            for ep in endpoints
        ),
    )
    paths = {"/", "/zz"}
    queries: set[tuple] = {()}
    for ep in endpoints:
        for pattern in [ep.path, *(m.path for m in (*ep.rules, *ep.deny_rules))]:
            if pattern:
                paths |= {canonical_path("/" + p) for p in _instances(pattern, "/")}
        for m in (*ep.rules, *ep.deny_rules):
            for key, (_, globs) in m.query:
                values = {v for g in globs for v in _instances(g, "")} | {"zz"}
                for v in sorted(values):
                    queries.add(((key, (v,)),))
                queries.add(((key, tuple(sorted(values))[:2]),))
                queries.add(((key, ("",)),))
    http = list(product(METHODS, sorted(paths), sorted(queries)))
    return combos, pairs, http

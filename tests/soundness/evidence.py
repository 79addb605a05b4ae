"""Soundness pairs that include environment evidence, judged on a real filesystem.

Each pair is an image (directories and symlinks: relative and absolute targets, chains,
sometimes a loop; users and a working directory) materialised in a temporary directory,
its evidence document written by the collector, and two policies over paths of that
image (some through symlinks, some beneath others) and process identities. The check
runs with the document in both semantics and is judged independently of the prover:
paths by ``os.path.realpath`` on the real tree (Landlock grants the hierarchy beneath a
directory), identities by the numbers of the image's accounts.

* ``within``: every path the candidate grants (by access kind) lies, on the real tree,
  at or beneath a boundary path of that kind (or is the same string), and each identity
  of the boundary is root or the candidate's;
* ``exceeds``: the named path lies beneath no boundary path of that kind, or the named
  identities differ and the boundary's is not root.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

from prover.api import check_boundary
from prover.environment.collect import collect_rootfs
from prover.results import FilesystemCounterexample, ProcessCounterexample, Verdict

DIRS = (
    "/usr",
    "/usr/bin",
    "/usr/lib",
    "/etc",
    "/opt",
    "/opt/app",
    "/srv",
    "/srv/data",
    "/sandbox",
    "/sandbox/project",
    "/tmp",
    "/home",
    "/home/dev",
)
USERS = {"root": 0, "sandbox": 1000, "dev": 1001}
#: "ghost" is in no image: the evidence is silent about it.
IDENTITIES = ("", "sandbox", "root", "0", "1000", "1001", "dev", "ghost")


@dataclass
class EvidencePair:
    candidate: str
    boundary: str
    environment: str
    root: Path


@dataclass(frozen=True)
class EvidenceFinding:
    kind: str
    detail: str
    candidate: str
    boundary: str
    environment: str

    def render(self) -> str:
        return (
            f"[{self.kind}] {self.detail}\n--- candidate ---\n{self.candidate}"
            f"--- boundary ---\n{self.boundary}--- environment ---\n{self.environment}\n"
        )


def _image(rng: random.Random, root: Path) -> list[str]:
    """Materialise an image under ``root``; returns the paths worth naming."""
    for directory in DIRS:
        (root / directory.lstrip("/")).mkdir(parents=True, exist_ok=True)
    (root / "etc/passwd").write_text(
        "".join(f"{name}:x:{uid}:{uid}::/:/bin/sh\n" for name, uid in USERS.items())
    )
    (root / "etc/group").write_text("".join(f"{n}:x:{g}:\n" for n, g in USERS.items()))
    links: list[str] = []
    for index in range(rng.randrange(2, 7)):
        parent = rng.choice(DIRS)
        link = f"{parent}/l{index}"
        target = rng.choice([*DIRS, *links, "/nowhere", link])  # itself: a loop
        if rng.random() < 0.5:
            os.symlink(os.path.relpath(target, parent), root / link.lstrip("/"))
        else:
            os.symlink(str(root) + target, root / link.lstrip("/"))
        links.append(link)
    if rng.random() < 0.5:
        os.symlink("usr/bin", root / "bin")
        links.append("/bin")
    names = [*DIRS, *links]
    return [*names, *(f"{p}/x" for p in rng.sample(names, 4)), "/"]


def _policy(rng: random.Random, paths: list[str]) -> dict:
    data: dict = {"version": 1}
    if rng.random() < 0.85:
        section: dict = {"include_workdir": rng.random() < 0.3}
        for key in ("read_only", "read_write"):
            chosen = rng.sample(paths, rng.randrange(0, 4))
            if chosen:
                section[key] = chosen
        data["filesystem_policy"] = section
    if rng.random() < 0.7:
        user, group = rng.choice(IDENTITIES), rng.choice(IDENTITIES)
        if user in ("root", "0") and rng.random() < 0.7:
            user = "sandbox"
        fields = {k: v for k, v in (("run_as_user", user), ("run_as_group", group)) if v}
        if fields:
            data["process"] = fields
    return data


def _wider(rng: random.Random, data: dict, paths: list[str]) -> dict:
    """A boundary around ``data``: its paths (some replaced by a parent) all writable."""
    wide = json.loads(json.dumps(data))
    section = wide.get("filesystem_policy")
    if section is not None:
        entries = [*section.pop("read_only", []), *section.get("read_write", [])]
        parents = [p.rsplit("/", 1)[0] or "/" if rng.random() < 0.4 else p for p in entries]
        section["read_write"] = list(dict.fromkeys(parents)) or [rng.choice(paths)]
    return wide


def _text(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


def _image_document(data: dict, root: Path) -> str:
    prefix = str(root)
    data["symlinks"] = {
        k: (v[len(prefix) :] or "/") if v.startswith(prefix) else v
        for k, v in data["symlinks"].items()
    }
    return json.dumps(data)


class Judge:
    def __init__(self, root: Path, workdir: str, user: str) -> None:
        self.root, self.workdir, self.user = root, workdir, user

    def real(self, path: str) -> str | None:
        host = str(self.root) + (path if path != "/" else "")
        try:
            real = os.path.realpath(host, strict=False)
            os.path.realpath(host, strict=True)
        except FileNotFoundError:
            pass
        except OSError:
            return None  # a loop: Landlock could not open it
        if real == str(self.root):
            return "/"
        return real[len(str(self.root)) :] if real.startswith(str(self.root) + "/") else None

    def covered(self, path: str, entries: list[str]) -> bool:
        if path in entries or "/" in entries:
            return True
        real = self.real(path)
        if real is None:
            return True  # grants nothing real
        for entry in entries:
            target = self.real(entry)
            if target is not None and (
                target == "/" or real == target or real.startswith(target + "/")
            ):
                return True
        return False

    def number(self, value: str, field: str) -> int | None:
        """The identity's number in the image, or None for a name it does not have."""
        value = value or self.user  # the image's group is named like its user here
        return int(value) if value.isdigit() else USERS.get(value)


def _grants(text: str, workdir: str) -> tuple[list[str], list[str], str, str]:
    import yaml

    data = yaml.safe_load(text)
    section = data.get("filesystem_policy")
    if section is None:
        read_only, read_write, include = [], [], True
    else:
        read_only = list(section.get("read_only") or [])
        read_write = list(section.get("read_write") or [])
        include = bool(section.get("include_workdir"))
    if include:
        read_write.append(workdir)
    process = data.get("process") or {}
    return (
        read_only,
        read_write,
        str(process.get("run_as_user", "")),
        str(process.get("run_as_group", "")),
    )


def _refused_identity(value: str) -> bool:
    """Does the runtime refuse this explicit identity? Written from OpenShell's
    ``is_valid_sandbox_identity`` (openshell-policy/src/lib.rs): only ``sandbox`` or a u32
    in [1, u32::MAX - 1] is accepted; an omitted one (empty) is not checked."""
    if value in ("", "sandbox"):
        return False
    digits = value[1:] if value.startswith("+") else value
    if not (digits.isascii() and digits.isdigit()):
        return True
    return not 1 <= int(digits) <= 2**32 - 2


def run_evidence_pair(seed: int, index: int) -> tuple[list[EvidenceFinding], dict[str, str]]:
    """Check one generated pair with its evidence, in both semantics; findings and the
    verdict of each semantics."""
    rng = random.Random(seed * 1_000_003 + index)
    findings: list[EvidenceFinding] = []
    verdicts: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "image"
        root.mkdir()
        paths = _image(rng, root)
        workdir = rng.choice(["/sandbox", "/sandbox/project", "/home/dev"])
        user = rng.choice(["sandbox", "dev", "root"])
        data = collect_rootfs(str(root), workdir=workdir, user=user)
        environment = _image_document(data, root)
        candidate_data = _policy(rng, paths)
        boundary_data = (
            _wider(rng, candidate_data, paths) if rng.random() < 0.4 else _policy(rng, paths)
        )
        candidate, boundary = _text(candidate_data), _text(boundary_data)
        judge = Judge(root, workdir, user)
        c_ro, c_rw, c_user, c_group = _grants(candidate, workdir)
        b_ro, b_rw, b_user, b_group = _grants(boundary, workdir)

        def finding(kind: str, detail: str) -> None:
            findings.append(EvidenceFinding(kind, detail, candidate, boundary, environment))

        for reference in (False, True):
            label = "reference" if reference else "extended"
            outcome = check_boundary(
                candidate, boundary, reference_semantics=reference, environment=environment
            ).outcome
            verdicts[label] = outcome.verdict.value
            if outcome.verdict is Verdict.WITHIN:
                for field, b, c in (
                    ("run_as_user", b_user, c_user),
                    ("run_as_group", b_group, c_group),
                ):
                    nb, nc = judge.number(b, field), judge.number(c, field)
                    unknown = (nb is None or nc is None) and b != c
                    if unknown or (nb is not None and nb != 0 and nb != nc):
                        finding("unsound_within", f"{label}: {field} {b!r}={nb} vs {c!r}={nc}")
                for path in c_rw:
                    if not judge.covered(path, b_rw):
                        finding("unsound_within", f"{label}: write {path}")
                for path in c_ro:
                    if not judge.covered(path, b_ro + b_rw):
                        finding("unsound_within", f"{label}: read {path}")
            elif outcome.verdict is Verdict.EXCEEDS:
                cex = outcome.counterexample
                if isinstance(cex, FilesystemCounterexample):
                    allowed = b_rw if cex.access == "write" else b_ro + b_rw
                    # an empty boundary set exceeds by spec §8.1, whatever the path is
                    loops = judge.real(cex.path) is None
                    if allowed and (judge.covered(cex.path, allowed) or loops):
                        finding("replay_failure", f"{label}: {cex.access} {cex.path} is covered")
                elif isinstance(cex, ProcessCounterexample):
                    b = b_user if cex.field == "run_as_user" else b_group
                    c = c_user if cex.field == "run_as_user" else c_group
                    nb, nc = judge.number(b, cex.field), judge.number(c, cex.field)
                    if nb is None or nc is None or nb == 0 or nb == nc:
                        finding("replay_failure", f"{label}: {cex.field} {b!r} vs {c!r}")
            elif (
                outcome.verdict is Verdict.ERROR
                and not reference
                and "the OpenShell runtime refuses it" in (outcome.reason or "")
            ):
                # validate_sandbox_policy (lib.rs): refused identities, read_write "/".
                if not any(
                    _refused_identity(value) for value in (c_user, c_group, b_user, b_group)
                ) and all(path.rstrip("/") for path in c_rw + b_rw):
                    finding("bug", f"{label}: refused without a refused identity or path")
            elif outcome.verdict in (Verdict.ERROR, Verdict.INCONCLUSIVE):
                finding("bug", f"{label}: {outcome.verdict.value} {outcome.reason}")
    return findings, verdicts

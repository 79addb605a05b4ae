"""Judging a boundary verdict against the sandboxes the runtime builds.

``within_boundary`` is unsound when, in some world, some action is allowed by the
candidate's sandbox and refused by the boundary's, or when the runtime refuses the
candidate outright (the verdict then describes no sandbox: the prover should answer
``error``). ``exceeds_boundary`` is a false exceed when its witness is not allowed by
the candidate's sandbox or is allowed by the boundary's (in the world the witness
names). Verdicts are plain JSON (``outcome.model_dump(mode="json")``): nothing here
knows the prover's types.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any

from tests.soundness.sandbox_oracle.actions import (
    IPS,
    can_run,
    file_paths,
    is_possible_exe,
    network_space,
)
from tests.soundness.sandbox_oracle.errors import Unmodelled
from tests.soundness.sandbox_oracle.image import Image
from tests.soundness.sandbox_oracle.network import Request
from tests.soundness.sandbox_oracle.sandbox import WORLDS, Sandbox, World, build_sandbox


@dataclass(frozen=True)
class Finding:
    """``kind`` is ``unsound``, ``false_exceed`` or ``false_error`` (an ``error`` for two
    policies the runtime runs: a false reject, not a soundness finding); ``domain`` one of
    ``validation``,
    ``filesystem``, ``identity``, ``network``, ``landlock`` (and finer labels).
    ``witness`` is the excess action shaped as a prover counterexample, when there is one."""

    kind: str
    domain: str
    detail: str
    witness: dict[str, Any] | None = None


def _pair(cand: str, bound: str, image: Image, world: World) -> tuple[Sandbox, Sandbox]:
    return build_sandbox(cand, image, world), build_sandbox(bound, image, world)


def _landlock_witness() -> dict[str, Any]:
    return {"domain": "landlock", "boundary": "hard_requirement", "candidate": "best_effort"}


def first_excess(cand_text: str, bound_text: str, image: Image) -> Finding | None:
    """An action the candidate's sandbox allows and the boundary's refuses, or None."""
    for world in WORLDS:
        cand, bound = _pair(cand_text, bound_text, image, world)
        if not cand.runs:
            continue
        where = f"world(landlock={world.kernel_landlock}, binary_identity={world.binary_identity})"
        if bound.refused:
            why = f"the runtime refuses the boundary: {bound.refused[0]}"
            return Finding("unsound", "validation", why)
        if bound.aborted is not None:
            # The boundary's sandbox never starts here, the candidate's does.
            kernel = world.kernel_landlock
            why = f"{where}: the boundary's sandbox does not start ({bound.aborted})"
            witness = None if kernel else _landlock_witness()
            return Finding("unsound", "boundary-aborts" if kernel else "landlock", why, witness)
        if cand.identity is not None and not bound.allows_identity(cand.identity):
            field = "run_as_user" if cand.identity[0] != bound.identity[0] else "run_as_group"
            index = 0 if field == "run_as_user" else 1
            witness = {
                "domain": "process",
                "field": field,
                "boundary": str(bound.identity[index]),
                "candidate": str(cand.identity[index]),
            }
            why = f"{where}: runs as uid/gid {cand.identity}; boundary: {bound.identity}"
            return Finding("unsound", "identity", why, witness)
        for path in file_paths(image, cand, bound):
            for access in ("read", "write"):
                if cand.allows_file(access, path) and not bound.allows_file(access, path):
                    kernel = world.kernel_landlock
                    why = f"{cand.landlock.why if cand.landlock else ''}"
                    detail = f"{where}: {access} {path} ({why}; boundary: {_why(bound)})"
                    witness = (
                        {"domain": "filesystem", "access": access, "path": path}
                        if kernel
                        else _landlock_witness()
                    )
                    domain = "filesystem" if kernel else "landlock"
                    return Finding("unsound", domain, detail, witness)
        if not world.kernel_landlock and cand.runs == bound.runs:
            continue  # the network does not depend on Landlock
        found = _network_excess(image, cand, bound, world)
        if found is not None:
            return Finding(
                "unsound", "network", f"{where}: {_render(found)}", _network_cex(found, world)
            )
    return None


def _network_cex(req: Request, world: World) -> dict[str, Any]:
    http = req.kind == "http"
    return {
        "domain": "network",
        "binary": req.exe,
        "ancestor_binary": req.ancestors[0] if req.ancestors else None,
        "binary_identity_required": world.binary_identity,
        "host": req.host,
        "destination_ip": req.ip,
        "trusted_gateway": False,
        "port": req.port,
        "protocol": "rest" if http else "l4",
        "method": req.method if http else None,
        "path": req.path if http else None,
        "query_params": {k: list(v) for k, v in req.query} or None,
    }


def _why(sandbox: Sandbox) -> str:
    if sandbox.refused:
        return "refused: " + sandbox.refused[0]
    if sandbox.aborted:
        return "does not start: " + sandbox.aborted
    if sandbox.fallback:
        return "the engine refuses it, restrictive default instead: " + sandbox.fallback[0]
    return sandbox.landlock.why if sandbox.landlock else ""


def _network_excess(image: Image, cand: Sandbox, bound: Sandbox, world: World) -> Request | None:
    combos, pairs, http = network_space(image, cand, bound, world.binary_identity)
    for (exe, anc), (host, port) in product(combos, pairs):
        chosen = None
        for ip in IPS:
            for kind in ("connect", "raw"):
                req = Request(exe, anc, host, port, ip, kind)
                if cand.allows_request(req):
                    chosen = chosen or ip
                    if not bound.allows_request(req):
                        return req
        if chosen is None:
            continue
        for method, path, query in http:
            req = Request(exe, anc, host, port, chosen, "http", method, path, query)
            if cand.allows_request(req) and not bound.allows_request(req):
                return req
    return None


def _render(req: Request) -> str:
    what = req.kind if req.kind != "http" else f"{req.method} {req.path} {dict(req.query) or ''}"
    return f"exe={req.exe} ancestors={list(req.ancestors)} {req.host}:{req.port} ip={req.ip} {what}"


def judge_witness(cand_text: str, bound_text: str, image: Image, cex: dict[str, Any]) -> str | None:
    """Why the witness of an ``exceeds_boundary`` verdict is false, or None if it holds."""
    domain = cex.get("domain")
    if domain == "filesystem":
        cand, bound = _pair(cand_text, bound_text, image, World())
        access, path = cex["access"], cex["path"]
        if not cand.allows_file(access, path):
            return f"the candidate's sandbox cannot {access} {path} ({_why(cand)})"
        if bound.allows_file(access, path):
            return f"the boundary's sandbox can {access} {path} too ({_why(bound)})"
        return None
    if domain == "process":
        cand, bound = _pair(cand_text, bound_text, image, World())
        if not cand.runs or cand.identity is None:
            return f"the candidate's sandbox runs nothing ({_why(cand)})"
        if bound.allows_identity(cand.identity):
            return f"both sandboxes run as uid/gid {cand.identity}"
        return None
    if domain == "landlock":
        for world in (World(False, True),):
            cand, bound = _pair(cand_text, bound_text, image, world)
            if cand.runs and not bound.runs:
                return None
            for path in file_paths(image, cand, bound):
                for access in ("read", "write"):
                    if cand.allows_file(access, path) and not bound.allows_file(access, path):
                        return None
        return "without Landlock in the kernel the candidate allows nothing the boundary refuses"
    if domain == "network":
        return _network_witness(cand_text, bound_text, image, cex)
    raise Unmodelled(f"counterexample domain {domain!r}")


def _network_witness(
    cand_text: str, bound_text: str, image: Image, cex: dict[str, Any]
) -> str | None:
    if cex.get("trusted_gateway"):
        raise Unmodelled("trusted gateway aliases")
    identity = bool(cex["binary_identity_required"])
    cand, bound = _pair(cand_text, bound_text, image, World(True, identity))
    exe = cex.get("binary") or "/opt/oracle/unlisted"
    ancestors = tuple(a for a in (cex.get("ancestor_binary"),) if a)
    if identity:
        if is_possible_exe(image, exe, cand) and not can_run(image, exe, cand):
            return f"[no-exec] the candidate's Landlock ruleset does not let it execute {exe}"
        for path in (exe, *ancestors):
            if not is_possible_exe(image, path, cand):
                if is_possible_exe(image, path):
                    return (
                        f"[absent-exe] no process can have /proc/<pid>/exe = {path}: no such file "
                        "in the image, and the candidate's process cannot create it"
                    )
                return f"[symlink-exe] no process has /proc/<pid>/exe = {path}: not canonical"
    base = dict(
        exe=exe,
        ancestors=ancestors,
        host=cex["host"],
        port=int(cex["port"]),
        ip=cex["destination_ip"],
    )
    if cex["protocol"] == "l4":
        reqs = [Request(**base, kind="connect"), Request(**base, kind="raw")]
    else:
        query = tuple(sorted((k, tuple(v)) for k, v in (cex.get("query_params") or {}).items()))
        reqs = [Request(**base, kind="http", method=cex["method"], path=cex["path"], query=query)]
    if any(cand.allows_request(r) and not bound.allows_request(r) for r in reqs):
        return None
    if not any(cand.allows_request(r) for r in reqs):
        return f"the candidate's sandbox refuses it ({_why(cand) or 'proxy decision'})"
    return f"the boundary's sandbox allows it too ({_why(bound) or 'proxy decision'})"


def judge(cand_text: str, bound_text: str, image: Image, outcome: dict[str, Any]) -> list[Finding]:
    """Every finding against one verdict (empty: the verdict stands)."""
    verdict = outcome.get("verdict")
    cand = build_sandbox(cand_text, image)
    if verdict == "within_boundary":
        if cand.refused:
            return [
                Finding(
                    "unsound", "validation", f"the runtime refuses the candidate: {cand.refused[0]}"
                )
            ]
        excess = first_excess(cand_text, bound_text, image)
        return [excess] if excess else []
    if verdict == "exceeds_boundary":
        cex = outcome.get("counterexample")
        if not cex:
            return [Finding("false_exceed", "witness", "exceeds_boundary without a witness")]
        if cand.refused:
            return [
                Finding(
                    "false_exceed",
                    "validation",
                    f"the runtime refuses the candidate: {cand.refused[0]}",
                )
            ]
        why = judge_witness(cand_text, bound_text, image, cex)
        if why is None:
            return []
        domain = "candidate-aborts" if cand.aborted is not None else str(cex.get("domain"))
        if why.startswith("[") and "]" in why:
            domain += ":" + why[1 : why.index("]")]
        return [Finding("false_exceed", domain, why)]
    if verdict == "error" and not cand.refused and not build_sandbox(bound_text, image).refused:
        # Not a soundness finding: a policy pair the runtime runs, refused by the prover.
        reason = str(outcome.get("reason") or "")[:160]
        return [Finding("false_error", "validation", f"the runtime runs both policies: {reason}")]
    return []

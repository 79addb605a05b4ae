"""How far each face is from the floor the machine and our own dependencies allow.

    python benchmarks/speed_floor.py [--calls 200] [--cold 15] [--repeat 9] [--only mcp,cli,z3]

Prints three ratios, each measured side by side in this one run, so that the machine's
speed and load cancel out:

1. **MCP stdio round trip**: ``check_boundary`` on the 16 + 16 ordinary pair
   (``benchmarks/policies.ordinary_pair``, within) through ``python -m server`` with the
   result cache off, against an *echo* tool built in this file with the same MCP SDK
   (``MCPServer``, the same stdio transport), called with the same two policy texts and
   answering them back unchanged. One client per server, calls alternating A, B, A, B
   after a warm-up; the ratio is of the medians. Target: at most 2x. Measured three
   ways (:data:`VARIANTS`): the same pair every call (the issue's measure; the server
   keeps loaded policies by their text, :mod:`prover.policy.memo`), a new candidate
   text each call against the same boundary (a parent agent vetting its subagents),
   and two new texts each call (nothing kept applies).
2. **CLI cold start**: ``policy-prover check`` on the seed example (text output, a fresh
   process each time) against ``python -c "import yaml, json"`` with the same
   interpreter, alternating. Target: at most 2.5x. The floor's modules (the standard
   library, PyYAML) run from their compiled bytecode, as installed packages do; the
   check runs from a copy of ``prover`` and ``server`` twice: compiled the same way (as
   ``pip install`` leaves a package; the figure the target is about), and from source
   with no ``.pyc`` at all (an editable checkout under ``PYTHONDONTWRITEBYTECODE=1``,
   which compiles every module it imports on every start).
3. **Z3-decided acceptance cases**, warm, in-process: every case of
   ``tests/data/boundary_cases.yaml`` (the specification's shared cases, copied) whose
   receipt says ``decided_by: z3``; each case's median of ``--repeat`` calls, then the
   median and the maximum over the cases, and their ratio to the floor of one small Z3
   query (a fresh context, one string constraint, ``check`` and a model). Targets:
   median at most 8 ms, maximum at most 25 ms.

The load average before and after is printed: other work on the machine inflates every
figure, the ratios least.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED_CANDIDATE = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n"
SEED_BOUNDARY = "version: 1\nfilesystem_policy:\n  read_only:\n    - /usr\n    - /etc\n"
FLOOR_IMPORTS = "import yaml, json"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def ms(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):7.2f} ms (min {min(values):.2f}, max {max(values):.2f})"
    )


# -- the echo server ------------------------------------------------------------------------


def serve_echo() -> None:
    """Run the floor: an MCP server over stdio with one tool that answers its arguments."""
    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("echo")

    def echo(candidate: str, boundary: str) -> str:
        """Answer the two texts back unchanged."""
        return candidate + boundary

    server.add_tool(echo, name="echo")
    anyio.run(server.run_stdio_async)


# -- 1. MCP stdio ---------------------------------------------------------------------------


#: How the texts of successive calls differ: the issue's measure sends the same pair
#: every time; an agent vetting new candidates against its own boundary sends a new
#: candidate each time; the last sends two texts the server has never seen. A new text
#: is the same policy with a comment naming the call (read in full: nothing is kept by
#: content).
VARIANTS = ("same pair", "new candidate", "new pair")


def _texts(variant: str, candidate: str, boundary: str, call: int) -> dict[str, str]:
    mark = f"# call {call}\n"
    if variant == "same pair":
        return {"candidate": candidate, "boundary": boundary}
    if variant == "new candidate":
        return {"candidate": candidate + mark, "boundary": boundary}
    return {"candidate": candidate + mark, "boundary": boundary + mark}


async def _mcp_times(calls: int, warmup: int) -> dict[tuple[str, str], list[float]]:
    import os

    from mcp import Client, StdioServerParameters

    from benchmarks.policies import ordinary_pair

    candidate, boundary = ordinary_pair(16)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POLICY_PROVER_CACHE_SIZE": "0"}
    # cwd: ``python -m server`` imports from the current directory first, so without it
    # a tree's benchmark run from another tree would measure that other tree's server.
    prover = StdioServerParameters(
        command=sys.executable, args=["-m", "server"], env=env, cwd=str(ROOT)
    )
    echo = StdioServerParameters(
        command=sys.executable,
        args=[str(Path(__file__).resolve()), "--echo-server"],
        env=env,
        cwd=str(ROOT),
    )
    times: dict[tuple[str, str], list[float]] = {}
    async with Client(prover) as check_client, Client(echo) as echo_client:
        pairs = (("check_boundary", check_client), ("echo", echo_client))
        # One variant after the other, each in its steady state (as one kind of client
        # would use the server), with its own warm-up.
        for variant in VARIANTS:
            for round_ in range(warmup + calls):
                arguments = _texts(variant, candidate, boundary, round_)
                for tool, client in pairs:
                    started = time.perf_counter()
                    answer = await client.call_tool(tool, arguments)
                    elapsed = (time.perf_counter() - started) * 1000.0
                    if answer.is_error:
                        raise RuntimeError(f"{tool} failed: {answer}")
                    if tool == "check_boundary":
                        result = (answer.structured_content or {}).get("result")
                        if result != "within_boundary":
                            raise RuntimeError(f"check_boundary answered {result!r}")
                    if round_ >= warmup:
                        times.setdefault((variant, tool), []).append(elapsed)
    return times


def mcp_ratios(calls: int) -> dict[str, float]:
    import anyio

    times = anyio.run(_mcp_times, calls, 20)
    ratios = {}
    for variant in VARIANTS:
        check, echo = times[(variant, "check_boundary")], times[(variant, "echo")]
        print(f"  {variant}:")
        print(f"    check_boundary 16+16  {ms(check)}")
        print(f"    echo (same SDK)       {ms(echo)}")
        ratios[variant] = statistics.median(check) / statistics.median(echo)
    return ratios


# -- 2. CLI cold start ----------------------------------------------------------------------


def _run(command: list[str], expected: int, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False, env=env)
    elapsed = (time.perf_counter() - started) * 1000.0
    if done.returncode != expected:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr!r}")
    return elapsed


def _copy_sources(into: Path, *, compiled: bool) -> None:
    """``prover`` and ``server`` copied without their bytecode; ``compiled``: then
    compiled to bytecode as ``pip install`` does."""
    import compileall
    import shutil

    for package in ("prover", "server"):
        target = into / package
        shutil.copytree(ROOT / package, target, ignore=shutil.ignore_patterns("__pycache__"))
        if compiled and not compileall.compile_dir(target, quiet=1):
            raise RuntimeError(f"compiling {target} failed")


def cli_ratio(cold: int) -> dict[str, float]:
    import os

    cli = str(Path(sys.executable).with_name("policy-prover"))
    ratios: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        candidate, boundary = Path(tmp, "candidate.yaml"), Path(tmp, "boundary.yaml")
        candidate.write_text(SEED_CANDIDATE)
        boundary.write_text(SEED_BOUNDARY)
        check = [cli, "check", str(candidate), "--boundary", str(boundary)]
        floor = [sys.executable, "-c", FLOOR_IMPORTS]
        envs = {}
        for kind in ("compiled", "source"):
            Path(tmp, kind).mkdir()
            _copy_sources(Path(tmp, kind), compiled=kind == "compiled")
            # The copy comes first on the path; nothing writes bytecode during the runs.
            envs[kind] = {
                **os.environ,
                "PYTHONPATH": str(Path(tmp, kind)),
                "PYTHONDONTWRITEBYTECODE": "1",
            }
        times: dict[str, list[float]] = {"compiled": [], "source": [], "floor": []}
        for round_ in range(cold + 2):
            a = _run(check, 0, envs["compiled"])
            b = _run(check, 0, envs["source"])
            c = _run(floor, 0)
            if round_ >= 2:  # two warm-up rounds: page cache
                times["compiled"].append(a)
                times["source"].append(b)
                times["floor"].append(c)
    floor_median = statistics.median(times["floor"])
    print(f"  policy-prover check (seed), compiled  {ms(times['compiled'])}")
    print(f"  policy-prover check (seed), source    {ms(times['source'])}")
    print(f"  python -c {FLOOR_IMPORTS!r}         {ms(times['floor'])}")
    for kind in ("compiled", "source"):
        ratios[kind] = statistics.median(times[kind]) / floor_median
    return ratios


# -- 3. Z3-decided acceptance cases ---------------------------------------------------------


def z3_floor(repeat: int) -> float:
    """One small query as a check pays for it: a fresh context (one per check), a
    solver, one string constraint, ``check`` and the model's value."""
    import z3

    times = []
    for _ in range(repeat * 3):
        started = time.perf_counter()
        ctx = z3.Context()
        path = z3.String("path", ctx)
        solver = z3.Solver(ctx=ctx)
        solver.add(z3.PrefixOf(z3.StringVal("/data/", ctx), path))
        if solver.check() != z3.sat:
            raise RuntimeError("the floor query must be satisfiable")
        solver.model().eval(path)
        times.append((time.perf_counter() - started) * 1000.0)
    return statistics.median(times)


def z3_cases(repeat: int) -> tuple[float, float, float]:
    from prover.api import check_boundary
    from tests.support import boundary_cases

    per_case: list[tuple[float, str]] = []
    cpu: list[float] = []
    for case in boundary_cases():
        candidate, boundary = case.get("candidate"), case.get("boundary")
        if not isinstance(candidate, str) or not isinstance(boundary, str):
            continue
        first = check_boundary(candidate, boundary, timeout_ms=10_000)  # warm-up
        if first.receipt.decided_by != "z3":
            continue
        times, cpu_times = [], []
        for _ in range(repeat):
            started, started_cpu = time.perf_counter(), time.process_time()
            check_boundary(candidate, boundary, timeout_ms=10_000)
            times.append((time.perf_counter() - started) * 1000.0)
            cpu_times.append((time.process_time() - started_cpu) * 1000.0)
        per_case.append((statistics.median(times), str(case.get("id", "?"))))
        cpu.append(statistics.median(cpu_times))
    medians = [t for t, _ in per_case]
    slowest = max(per_case)
    floor = z3_floor(repeat)
    print(
        f"  {len(per_case)} cases decided by Z3: median {statistics.median(medians):.2f} ms, "
        f"max {slowest[0]:.2f} ms ({slowest[1]})"
    )
    print(
        f"  the same in CPU time of the process (less sensitive to other load): median "
        f"{statistics.median(cpu):.2f} ms, max {max(cpu):.2f} ms"
    )
    print(f"  floor, one small Z3 query in a fresh context: {floor:.2f} ms")
    return statistics.median(medians), slowest[0], floor


# -- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="MCP calls per server")
    parser.add_argument("--cold", type=int, default=15, help="CLI cold starts per command")
    parser.add_argument("--repeat", type=int, default=9, help="warm runs per Z3 case")
    parser.add_argument("--only", default="mcp,cli,z3", help="which figures to measure")
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.echo_server:
        serve_echo()
        return 0
    only = set(args.only.split(","))
    print(f"load average before: {load_average()}", flush=True)
    lines = []
    if "mcp" in only:
        print("MCP stdio round trip:", flush=True)
        ratios = mcp_ratios(args.calls)
        lines.append(
            f"MCP stdio check_boundary / echo        {ratios['same pair']:5.2f}x   (target <= 2x; "
            f"new candidate each call: {ratios['new candidate']:.2f}x, "
            f"new pair each call: {ratios['new pair']:.2f}x)"
        )
    if "cli" in only:
        print("CLI cold start:", flush=True)
        cli = cli_ratio(args.cold)
        lines.append(
            f"CLI cold start / python+yaml+json      {cli['compiled']:5.2f}x   (target <= 2.5x; "
            f"from source, no .pyc: {cli['source']:.2f}x)"
        )
    if "z3" in only:
        print("Z3-decided acceptance cases, warm:", flush=True)
        median, maximum, floor = z3_cases(args.repeat)
        lines.append(
            f"Z3 cases median {median:.1f} ms / max {maximum:.1f} ms  "
            f"= {median / floor:.1f}x / {maximum / floor:.1f}x one query   "
            "(target median <= 8 ms, max <= 25 ms)"
        )
    print(f"load average after: {load_average()}")
    print("\n".join(["ratios:", *lines]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

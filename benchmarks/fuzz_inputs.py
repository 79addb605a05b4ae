"""The long run of the hostile-input campaign: hypothesis fuzzing of every target.

    python benchmarks/fuzz_inputs.py --count 100000 [--targets loader_raw,mcp_tools]
                                     [--seed N] [--json results.json]

Splits ``--count`` inputs over the targets of tests/hostile/campaign.py (the loader on
mutated and raw input, check_boundary, assess_proposal, and every MCP tool's arguments
through the in-memory client), runs them with random seeds, and prints per target the
inputs run, the time and the count of each outcome. A broken promise (crash, hang,
traceback text, a verdict for a policy that does not load) is printed with hypothesis's
shrunk input, the other targets still run, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis.errors import HypothesisWarning

from tests.hostile.campaign import TARGETS, Tally, run_target

#: Share of ``--count`` per target: the loader is cheap, the tools and checks are not.
SHARES = {
    "loader_structured": 0.30,
    "loader_raw": 0.30,
    "check_boundary": 0.20,
    "assess_proposal": 0.10,
    "mcp_tools": 0.10,
}


def _plan(count: int, names: list[str]) -> dict[str, int]:
    total = sum(SHARES[name] for name in names)
    return {name: max(1, round(count * SHARES[name] / total)) for name in names}


def _run(name: str, examples: int, seed: int | None) -> dict[str, Any]:
    started = time.monotonic()
    report: dict[str, Any] = {"target": name, "planned": examples}
    tally = Tally()
    try:
        run_target(name, examples, seed=seed, tally=tally)
        report["finding"] = None
    except Exception as exc:  # a Finding (shrunk by hypothesis) or a fuzzer bug
        report["finding"] = "".join(traceback.format_exception(exc))
    report["outcomes"] = dict(tally.counts.most_common())
    report["inputs"] = tally.inputs
    report["slowest_s"] = round(tally.slowest_s, 3)
    report["slowest_outcome"] = tally.slowest_outcome
    report["slowest_input"] = repr(tally.slowest_input)[:20_000]
    report["max_overrun_s"] = round(tally.max_overrun_s, 3)
    report["late_over_1s"] = tally.late
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


def _print(report: dict[str, Any]) -> None:
    rate = report["inputs"] / report["seconds"] if report["seconds"] else 0.0
    print(
        f"{report['target']:<18} {report['inputs']:>7} inputs  {report['seconds']:>7.1f} s  "
        f"({rate:,.0f}/s)  slowest input {report['slowest_s']:.2f} s ({report['slowest_outcome']})",
        flush=True,
    )
    print(
        f"    deadline overrun: max {report['max_overrun_s']:.2f} s, "
        f"{report['late_over_1s']} answers more than 1 s late",
        flush=True,
    )
    for outcome, number in report["outcomes"].items():
        print(f"    {outcome:<52} {number:>7}", flush=True)
    if report["finding"]:
        finding = report["finding"]
        shown = finding if len(finding) <= 6000 else finding[:3000] + "\n...\n" + finding[-3000:]
        print(f"    FINDING:\n{shown}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=100_000, help="inputs in total")
    parser.add_argument(
        "--targets",
        default=",".join(t.name for t in TARGETS),
        help="comma-separated subset of: " + ", ".join(t.name for t in TARGETS),
    )
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default random)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.targets.split(",") if name.strip()]
    unknown = [name for name in names if name not in SHARES]
    if unknown:
        parser.error(f"unknown targets: {', '.join(unknown)}")
    logging.disable(logging.CRITICAL)  # rejected arguments and known bugs are counted instead
    warnings.simplefilter("ignore", HypothesisWarning)  # "overly large repr" of big inputs
    plan = _plan(args.count, names)
    load_before = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"fuzzing {sum(plan.values())} inputs: {plan}; load average {load_before}", flush=True)
    started = time.monotonic()
    reports = []
    for name in names:
        report = _run(name, plan[name], args.seed)
        _print(report)
        reports.append(report)
    total = sum(r["inputs"] for r in reports)
    elapsed = time.monotonic() - started
    findings = [r["target"] for r in reports if r["finding"]]
    load_after = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"total {total} inputs in {elapsed:.1f} s; findings: {findings or 'none'}; "
        f"load average {load_after}",
        flush=True,
    )
    if args.json is not None:
        summary = {
            "total": total,
            "seconds": round(elapsed, 1),
            "load_average": {"before": load_before, "after": load_after},
            "targets": reports,
        }
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

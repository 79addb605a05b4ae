"""The policy reader's fast path against its event composer, side by side.

    PYTHONPATH=. python benchmarks/reader_speed.py [--calls 500] [--rounds 3]

For each text (the two 16-rule ordinary policies of ``benchmarks.policies`` and the
largest real policy of the corpus) prints the median time of ``read_policy_data`` (fast
path) and of ``read_policy_events`` (the event composer alone, what every read cost
before the fast path), calls alternating, and how many of the corpus policies the fast
path takes. Both give the same data (``tests/prover/policy/test_simple_yaml.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from benchmarks.policies import ordinary_pair
from prover.policy import reader
from prover.policy.reader import read_policy_data, read_policy_events
from prover.policy.simple_yaml import read_simple
from tests.corpus import corpus_entries


def _medians(text: str, calls: int) -> tuple[float, float]:
    readers: tuple[Callable[[str], object], ...] = (read_policy_data, read_policy_events)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(calls):
        for read, spent in zip(readers, times, strict=True):
            start = time.perf_counter()
            read(text)
            spent.append(time.perf_counter() - start)
    return statistics.median(times[0]) * 1e3, statistics.median(times[1]) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = [entry.text for entry in corpus_entries()]
    taken = [text for text in corpus if read_simple(text, reader.limits()) is not None]
    candidate, boundary = ordinary_pair(16)
    texts = {
        f"ordinary 16-rule candidate ({len(candidate)} B)": candidate,
        f"ordinary 16-rule boundary ({len(boundary)} B)": boundary,
        f"largest corpus policy taken ({len(max(taken, key=len))} B)": max(taken, key=len),
    }
    print(f"load average before: {os.getloadavg()}")
    print(f"fast path takes {len(taken)} of {len(corpus)} corpus policies")
    for round_ in range(args.rounds):
        for name, text in texts.items():
            fast, events = _medians(text, args.calls)
            print(
                f"round {round_ + 1}: {name}: fast {fast:.3f} ms, "
                f"events {events:.3f} ms ({events / fast:.2f}x)"
            )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""How much of the real corpus environment evidence decides.

Every valid policy of ``tests/data/real_policies`` is checked against each of a handful
of real boundary policies from the same corpus, without and with the evidence document
of the standard sandbox image (``server/data/sandbox-environment.yaml``, as in the demo).
Prints the share of pairs that stay ``unsupported`` before and after, the reasons left, and whether
every ``exceeds_boundary`` replays concretely (with the evidence, through
:func:`prover.environment.replay.replays_with_environment`; network witnesses of the
extended analysis through its own replay as well).

Usage: ``python -m benchmarks.environment_corpus [--limit N]``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from prover.api import check_boundary
from prover.environment import load_environment
from prover.environment.replay import replays_with_environment
from prover.extended.check import witness_is_real
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.policy.model import Policy
from prover.policy.normalize import filesystem_of, process_fields
from prover.results import NetworkCounterexample, Verdict
from tests.corpus import corpus_entries

ENVIRONMENT = Path(__file__).parent.parent / "server" / "data" / "sandbox-environment.yaml"

#: Real policies used as boundaries: broad sandbox policies of several projects.
BOUNDARIES = (
    "nvidia-openshell/dev-sandbox-policy-00e2f489.yaml",
    "nvidia-nemoclaw/openclaw-sandbox-074f6639.yaml",
    "nvidia-openshell-community/policy-fe9bdfb6.yaml",
    "nvidia-openshell-research/policy-08f7d476.yaml",
    "enriqts-openshell-environments/base-854df697.yaml",
    "davidhayesbc-openclaw-openshell/base-policy-0db81640.yaml",
    "anishrivastava-openshell-deepagent/policy-40f20ee4.yaml",
    "nvidia-openshell/default-60bf7cb8.yaml",
)


def _policy_without_network(text: str) -> Policy:
    authored = load_policy(text)
    user, group, landlock = process_fields(authored)
    return Policy(filesystem_of(authored), user, group, landlock)


def _replays(candidate: str, boundary: str, outcome: object, env: object) -> bool:
    cex = getattr(outcome, "counterexample", None)
    if cex is None:
        return False
    if isinstance(cex, NetworkCounterexample):
        cand, bound = read_policy(load_policy(candidate)), read_policy(load_policy(boundary))
        return witness_is_real(cand, bound, cex)
    if _without_landlock(candidate) and getattr(cex, "path", None) == "/":
        # landlock.rs prepare_with_path_open_mode builds no ruleset for a policy whose
        # lists are empty (no workdir, no network rules to add baseline paths): it may
        # write /, which no boundary the runtime runs grants (read_write: [/] is refused).
        return "/" not in _policy_without_network(boundary).filesystem.read_write
    return replays_with_environment(
        _policy_without_network(candidate), _policy_without_network(boundary), cex, env
    )


def _without_landlock(text: str) -> bool:
    authored = load_policy(text)
    fs = filesystem_of(authored)
    empty = not (fs.include_workdir or fs.read_only or fs.read_write)
    return empty and not authored.network_policies


def depends_on_image(outcome: object) -> bool:
    """An ``unsupported`` outcome whose reason is a fact of the sandbox image."""
    code = str(getattr(outcome, "reason_code", "") or "")
    reason = str(getattr(outcome, "reason", "") or "")
    return code in IMAGE_REASONS or "execution-environment evidence" in reason


IMAGE_REASONS = {"unresolved_workdir", "unresolved_filesystem_path", "unresolved_binary_path"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=0, help="check only the first N candidates")
    args = parser.parse_args(argv)
    environment_text = ENVIRONMENT.read_text(encoding="utf-8")
    env = load_environment(environment_text)
    entries = [e for e in corpus_entries() if e.expect == "valid"]
    texts = {e.file: e.text for e in entries}
    boundaries = [texts[name] for name in BOUNDARIES]
    candidates = entries[: args.limit] if args.limit else entries
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    transitions: Counter[tuple[str, str]] = Counter()
    exceeds = replayed = 0
    image_before = image_after = 0
    image_outcomes: Counter[str] = Counter()
    for entry in candidates:
        for boundary in boundaries:
            old = check_boundary(entry.text, boundary).outcome
            new = check_boundary(entry.text, boundary, environment=env).outcome
            before[old.verdict.value] += 1
            after[new.verdict.value] += 1
            transitions[(old.verdict.value, new.verdict.value)] += 1
            if old.verdict is Verdict.UNSUPPORTED and depends_on_image(old):
                image_before += 1
                image_outcomes[new.verdict.value] += 1
            image_after += new.verdict is Verdict.UNSUPPORTED and depends_on_image(new)
            if new.verdict is Verdict.UNSUPPORTED:
                reasons["image" if depends_on_image(new) else "other"] += 1
            if new.verdict is Verdict.EXCEEDS:
                exceeds += 1
                replayed += _replays(entry.text, boundary, new, env)
    pairs = sum(before.values())
    out = sys.stdout
    out.write(f"pairs: {pairs} ({len(candidates)} candidates x {len(boundaries)} boundaries)\n")
    for label, counts in (("without evidence", before), ("with evidence", after)):
        share = 100.0 * counts["unsupported"] / pairs if pairs else 0.0
        shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        out.write(f"{label}: unsupported {share:.1f}% ({shown})\n")
    valid = pairs - before["error"]
    out.write(f"pairs of valid policies: {valid}\n")
    for label, counts in (("without evidence", before), ("with evidence", after)):
        share = 100.0 * counts["unsupported"] / valid if valid else 0.0
        out.write(f"{label}: unsupported {share:.1f}% of valid pairs\n")
    for label, count in (("without evidence", image_before), ("with evidence", image_after)):
        share = 100.0 * count / valid if valid else 0.0
        out.write(f"{label}: unsupported on a fact of the image {count} ({share:.1f}%)\n")
    out.write(f"pairs unsupported on an image fact, with evidence: {dict(image_outcomes)}\n")
    out.write("still unsupported, by kind: " + str(dict(reasons.most_common())) + "\n")
    out.write("transitions: " + str(dict(transitions.most_common())) + "\n")
    out.write(f"exceeds with evidence: {exceeds}, replayed: {replayed}\n")
    return 0 if replayed == exceeds else 1


if __name__ == "__main__":
    raise SystemExit(main())

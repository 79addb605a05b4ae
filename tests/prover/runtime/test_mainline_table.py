"""The prover's reading against mainline OpenShell's own answers, recorded.

``tests/data/mainline_validation.json`` holds what OpenShell (2f7fb65) says of every
corpus policy and of targeted rows: ``parse_sandbox_policy`` (``ok`` or its error),
``validate_sandbox_policy`` (every violation) and ``find_endpoint_ambiguities``
(``benchmarks/mainline_validation_table.py`` records it with OpenShell's validator built
from source). The default reading must load exactly what mainline accepts: no false
reject, no false accept, and every refusal in mainline's words.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from prover.errors import PolicyLoadError
from prover.policy.loader import PolicyRefusedError, load_policy
from tests.corpus import CORPUS_DIR, corpus_entries
from tests.support import DATA

TABLE: dict[str, Any] = json.loads((DATA / "mainline_validation.json").read_text(encoding="utf-8"))
ENTRIES = {entry.file: entry.text for entry in corpus_entries()}
_AMBIGUITY = re.compile(
    r"network policies '(.*)' endpoint\[(\d+)\] \((.*)\) and '(.*)' endpoint\[(\d+)\] "
    r"\((.*)\) overlap on port\(s\) ([\d,]+) with conflicting metadata: (.*)"
)


def _ambiguity(text: str) -> tuple[object, ...]:
    """An ambiguity without its sides' order (upstream walks a hash map, so either
    endpoint may come first, with every conflict's two values swapped alike)."""
    match = _AMBIGUITY.fullmatch(text)
    assert match is not None, text
    left, right = match.group(1, 2, 3), match.group(4, 5, 6)
    conflicts = []
    for conflict in match.group(8).split("; "):
        field, _, values = conflict.partition("=")
        first, _, second = values.partition(" vs ")
        conflicts.append((field, frozenset((first, second))))
    return frozenset((left, right)), match.group(7), frozenset(conflicts)


def _ours(text: str) -> tuple[str, tuple[str, ...]]:
    """(``parse``, (message,)), (``refused``, refusals) or (``ok``, ())."""
    try:
        load_policy(text, runtime=True)
    except PolicyRefusedError as refused:
        return "refused", refused.refusals
    except PolicyLoadError as error:
        return "parse", (error.message,)
    return "ok", ()


def _parse_names(ours: str, theirs: str) -> None:
    """Our parse error names what mainline's names: the unknown field, or the path."""
    detail = theirs.removeprefix("failed to parse sandbox policy YAML: ")
    unknown = re.search(r"unknown field `([^`]+)`", detail)
    if unknown is not None:
        assert "unknown field" in ours and unknown.group(1) in ours, (ours, theirs)
        return
    path = detail.split(": ", 1)[0].replace("\\", "").replace(".[", "[")
    if " " not in path:
        assert path in ours, (ours, theirs)


def _compare(text: str, answer: dict[str, Any]) -> None:
    kind, found = _ours(text)
    parse = answer["parse_sandbox_policy"]
    if parse != "ok":
        assert kind == "parse", (kind, found, parse)  # no false accept
        _parse_names(found[0], parse)
        return
    assert kind != "parse", found  # no false reject
    violations = [f for f in found if not f.startswith("network policies '")]
    ambiguities = [f for f in found if f.startswith("network policies '")]
    assert sorted(violations) == sorted(answer["validate_sandbox_policy"])
    assert Counter(map(_ambiguity, ambiguities)) == Counter(
        map(_ambiguity, answer["find_endpoint_ambiguities"])
    )


@pytest.mark.parametrize("name", sorted(TABLE["rows"]))
def test_targeted_row_is_read_as_mainline_reads_it(name: str) -> None:
    row = TABLE["rows"][name]
    _compare(row["policy"], row)


def test_every_corpus_policy_is_read_as_mainline_reads_it() -> None:
    assert set(TABLE["corpus"]) == set(ENTRIES), "re-run benchmarks/mainline_validation_table"
    outcomes: Counter[str] = Counter()
    for file, answer in sorted(TABLE["corpus"].items()):
        assert (CORPUS_DIR / file).is_file()
        _compare(ENTRIES[file], answer)
        refused = answer["parse_sandbox_policy"] != "ok" or any(
            answer[key] for key in ("validate_sandbox_policy", "find_endpoint_ambiguities")
        )
        outcomes["refused" if refused else "accepted"] += 1
    # Both kinds are there, so the comparison can fail either way.
    assert outcomes["accepted"] > 0 and outcomes["refused"] > 0


def test_the_reference_reading_keeps_its_own_verdicts() -> None:
    """``--reference-semantics`` runs no runtime validator: a policy only the runtime
    refuses loads there (its verdicts stay the reference's, byte for byte)."""
    row = TABLE["rows"]["identity-root"]
    assert row["validate_sandbox_policy"]
    load_policy(row["policy"], reference=True)

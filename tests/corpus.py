"""The real-policy corpus: OpenShell policies collected from public repositories.

``tests/data/real_policies/PROVENANCE.json`` lists every file with its source repository,
path, commit, license, SHA-256 and ``expect`` (``valid``, or ``invalid`` for the upstream's
own negative-test fixtures). ``benchmarks/collect_real_policies.py`` rebuilds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CORPUS_DIR = Path(__file__).parent / "data" / "real_policies"


@dataclass(frozen=True)
class CorpusEntry:
    file: str
    text: str
    sha256: str
    repo: str
    path: str
    commit: str
    license: str
    expect: str
    extraction: str

    @property
    def id(self) -> str:
        return self.file


def corpus_entries() -> Iterator[CorpusEntry]:
    """Every corpus policy with its provenance, in file order."""
    data = json.loads((CORPUS_DIR / "PROVENANCE.json").read_text(encoding="utf-8"))
    for entry in data["entries"]:
        text = (CORPUS_DIR / entry["file"]).read_bytes().decode("utf-8")
        yield CorpusEntry(
            file=entry["file"],
            text=text,
            sha256=entry["sha256"],
            repo=entry["repo"],
            path=entry["path"],
            commit=entry["commit"],
            license=entry["license"],
            expect=entry["expect"],
            extraction=entry["extraction"],
        )

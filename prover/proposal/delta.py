"""The baseline/candidate delta, its suppression rule and ``validation_result`` (spec §4).

* A path is new when its key — (binary, host, port, category, method), *without* the rule
  name or mechanism — is absent from the baseline's paths of the same category. So the
  same gap under a different rule name is not new.
* Suppression: a ``capability_expansion`` path whose (binary, host, port) also appears in
  the delta's ``credential_reach_expansion`` is dropped; a new reach is described once.
* ``validation_result`` is ``prover: no new findings`` for an empty delta, else
  ``prover: N new finding[s]`` (N counts *categories*, spec §11.6) followed by one
  ``"\\n  "``-prefixed shorthand line per path.

Descriptions are recounted for the delta's paths (the reference keeps the candidate's
count in a delta finding's description).
"""

from __future__ import annotations

from prover.proposal.findings import Category, Finding, with_paths

NO_NEW_FINDINGS = "prover: no new findings"


def finding_delta(
    baseline: tuple[Finding, ...], candidate: tuple[Finding, ...]
) -> tuple[Finding, ...]:
    known = {path.delta_key(finding.category) for finding in baseline for path in finding.paths}
    delta: list[Finding] = []
    for finding in candidate:
        fresh = tuple(p for p in finding.paths if p.delta_key(finding.category) not in known)
        if fresh:
            delta.append(with_paths(finding, fresh))
    reached = {
        (path.binary, path.host, path.port)
        for finding in delta
        if finding.category is Category.CREDENTIAL_REACH_EXPANSION
        for path in finding.paths
    }
    result: list[Finding] = []
    for finding in delta:
        if finding.category is Category.CAPABILITY_EXPANSION:
            kept = tuple(p for p in finding.paths if (p.binary, p.host, p.port) not in reached)
            if not kept:
                continue
            if len(kept) != len(finding.paths):
                finding = with_paths(finding, kept)
        result.append(finding)
    return tuple(result)


def validation_result(delta: tuple[Finding, ...]) -> str:
    if not delta:
        return NO_NEW_FINDINGS
    count = len(delta)
    lines = [f"prover: {count} new finding{'' if count == 1 else 's'}"]
    lines.extend(finding.shorthand() for finding in delta)
    return "\n  ".join(lines)

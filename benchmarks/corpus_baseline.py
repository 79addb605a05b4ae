"""Baseline figures for the real-policy corpus: each policy checked against itself.

Usage: ``python -m benchmarks.corpus_baseline`` (prints Markdown).
"""

from __future__ import annotations

import re
from collections import Counter

import yaml

from prover.api import check_boundary
from tests.corpus import corpus_entries


def constructs(text: str) -> set[str]:
    """Constructs of issue 11 that a policy uses (read from its text and parsed data)."""
    found: set[str] = set()
    try:
        data = yaml.safe_load(text)
    except Exception:
        data = None
    checks = {
        "websocket": r"websocket",
        "tls: skip": r"^\s*tls:\s*skip",
        "tls: terminate": r"^\s*tls:\s*terminate",
        "audit enforcement": r"^\s*enforcement:\s*audit",
        "mcp": r"^\s*protocol:\s*mcp",
        "json-rpc": r"^\s*protocol:\s*json[-_]?rpc",
        "graphql": r"^\s*protocol:\s*graphql",
        "protocol: rest": r"^\s*protocol:\s*rest",
        "network_middlewares": r"^network_middlewares:",
        "middleware attachment": r"^\s*middlewares?:",
        "allowed_ips": r"^\s*allowed_ips:",
        "credential binding": r"credential",
        "allow_encoded_slash": r"allow_encoded_slash",
        "harness": r"^\s*harness:",
        "include_workdir": r"include_workdir",
        "integer run_as_user": r"^\s*run_as_user:\s*\d+\s*$",
    }
    for name, pattern in checks.items():
        if re.search(pattern, text, re.M | re.I):
            found.add(name)
    if isinstance(data, dict):
        for key in ("filesystem_policy", "network_policies", "landlock", "process"):
            if key in data and not data[key]:
                found.add("null/empty section")
        pols = data.get("network_policies")
        if isinstance(pols, dict):
            seen: dict[tuple[str, object], int] = {}
            for pol in pols.values():
                for ep in (pol or {}).get("endpoints") or [] if isinstance(pol, dict) else []:
                    if not isinstance(ep, dict):
                        continue
                    if not ep.get("host") and ep.get("allowed_ips"):
                        found.add("hostless allowed_ips")
                    ports = ep.get("ports") or [ep.get("port")]
                    for port in ports:
                        host = str(ep.get("host") or "")
                        key = (host.lower(), port)
                        seen[key] = seen.get(key, 0) + 1
                        if seen[key] > 1:
                            found.add("same host:port twice")
            hosts = {h for h, _ in seen}
            if any("*" in h for h in hosts) and len(hosts) > 1:
                for h, p in seen:
                    if "*" in h:
                        suffix = h.lstrip("*")
                        if any(o != h and o.endswith(suffix) and (o, p) in seen for o in hosts):
                            found.add("exact and wildcard host on one port")
    return found


def main() -> None:
    verdicts: Counter[str] = Counter()
    by_expect: Counter[tuple[str, str]] = Counter()
    reasons: Counter[tuple[str, str, str]] = Counter()
    used: Counter[str] = Counter()
    unsupported_by: Counter[str] = Counter()
    errors: list[tuple[str, str]] = []
    entries = list(corpus_entries())
    for entry in entries:
        out = check_boundary(entry.text, entry.text).outcome
        verdict = out.verdict.value
        verdicts[verdict] += 1
        by_expect[(entry.expect, verdict)] += 1
        names = constructs(entry.text)
        used.update(names)
        if verdict != "within_boundary":
            code = out.reason_code.value if out.reason_code else "-"
            prefix = re.sub(r"'[^']*'", "'…'", out.reason or "")[:90]
            reasons[(verdict, code, prefix)] += 1
            if verdict == "unsupported":
                unsupported_by.update(names)
        if verdict == "error" and entry.expect == "valid":
            errors.append((entry.file, (out.reason or "")[:160]))
    print(f"# Real-policy corpus baseline\n\n{len(entries)} distinct policies, each vs itself.\n")
    print("| verdict | all | expect valid | expect invalid |\n|---|---|---|---|")
    for verdict, count in verdicts.most_common():
        print(
            f"| {verdict} | {count} | {by_expect[('valid', verdict)]} "
            f"| {by_expect[('invalid', verdict)]} |"
        )
    print("\n## Top reasons (verdict, code, reason prefix with quoted names elided)\n")
    for (verdict, code, prefix), count in reasons.most_common(30):
        print(f"- {count} × {verdict} `{code}`: {prefix}")
    print("\n## Constructs: policies using each (and how many of those are unsupported)\n")
    print("| construct | policies | unsupported |\n|---|---|---|")
    for name, count in used.most_common():
        print(f"| {name} | {count} | {unsupported_by[name]} |")
    print("\n## `expect: valid` policies that give `error`\n")
    for file, reason in errors:
        print(f"- `{file}`: {reason}")


if __name__ == "__main__":
    main()

"""Fixes that keep access: how often explain's verified fix keeps more grant units than
deleting the violating rules outright, on exceeds pairs built from the real-policy corpus.

Pairs (candidate, boundary), each kept only when the check says ``exceeds_boundary``.
The boundary is a real policy; the candidate is that policy made broader the way an
agent writing a subagent's policy tends to over-reach (each kind at most once per
policy, on the first entry it applies to):

* ``extra binary``: ``/usr/bin/node`` added to a rule's binaries;
* ``wildcard host``: an exact host ``a.b.c`` written ``*.b.c``;
* ``extra port``: a second port on an endpoint;
* ``broader path``: a REST allow rule's path widened to ``/**``;
* ``broader method``: a REST allow rule's method widened to ``*``;
* ``L4 instead of REST``: a REST endpoint's protocol, rules and presets dropped;
* ``skip TLS``: ``tls: skip`` added to a REST endpoint;
* ``writable path``: a read-only path made writable;
* ``new host in a rule``: an endpoint on a host the boundary lacks added to a rule;
* ``several at once``: an extra binary, a broader method, an extra port and a writable
  path together, as a subagent's policy written in one go tends to have them;
* ``new host rule``, ``new writable path``: ``tests/corpus_variants.py``'s widenings,
  entries wholly outside the boundary, where deleting them *is* the narrowest fix;
* ``same repository``: two consecutive policies of one repository, each way.

Every check and explanation uses the bundled sandbox-image evidence
(``server/data/sandbox-environment.yaml``): without it, filesystem pairs are
``unsupported`` (the workdir could be ``/``).

With ``--needs N``, each exceeds pair also gets up to N *needs* drawn from the
candidate's own grants that the boundary allows too (a request of a rule's exact binary
to an exact host, with a REST rule's method and a concrete path; a filesystem entry's
read or write), and is explained with and without them: every need must be kept in every
verified fix, and the figures say how many needs the fix made without them drops.

Usage: ``python -m benchmarks.fix_retention [--limit N] [--timeout-ms MS] [--dump FILE]
[--needs N]`` (Markdown; ``--dump`` writes one JSON line per pair).
"""

from __future__ import annotations

import argparse
import copy
import json
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from prover.api import check_boundary
from prover.explain import explain
from prover.explain.document import dump_text, load_document
from prover.explain.needs import need_allowed as _allowed
from prover.explain.needs import read_needs
from prover.policy.model import Policy
from prover.policy.reader import read_policy_data
from prover.results import Verdict
from tests.corpus import corpus_entries
from tests.corpus_variants import variants

#: The sandbox image's facts (the workdir among them): filesystem pairs need them.
ENVIRONMENT = (
    Path(__file__).resolve().parent.parent / "server" / "data" / "sandbox-environment.yaml"
)
EXTRA_BINARY = "/usr/bin/node"
EXTRA_PORT = 8443
NEW_HOST = "unlisted-host.example.invalid"

Data = dict[str, Any]
#: Kinds where nothing of the added access is inside the boundary.
OUTSIDE = frozenset({"new host rule", "new writable path"})


def _endpoints(data: Data) -> Iterator[tuple[Data, Data]]:
    """(rule, endpoint) pairs of a policy mapping, in document order."""
    rules = data.get("network_policies")
    if not isinstance(rules, dict):
        return
    for rule in rules.values():
        if not isinstance(rule, dict) or not isinstance(rule.get("endpoints"), list):
            continue
        for endpoint in rule["endpoints"]:
            if isinstance(endpoint, dict):
                yield rule, endpoint


def _is_rest(endpoint: Data) -> bool:
    return str(endpoint.get("protocol") or "").lower() == "rest"


def _extra_binary(data: Data) -> bool:
    for rule, _ in _endpoints(data):
        binaries = rule.get("binaries")
        if isinstance(binaries, list) and binaries:
            if any(isinstance(b, dict) and b.get("path") == EXTRA_BINARY for b in binaries):
                return False
            binaries.append({"path": EXTRA_BINARY})
            return True
    return False


def _wildcard_host(data: Data) -> bool:
    for _, endpoint in _endpoints(data):
        host = endpoint.get("host")
        if isinstance(host, str) and "*" not in host and host.count(".") >= 2:
            if not host.replace(".", "").isdigit():
                endpoint["host"] = "*." + host.split(".", 1)[1]
                return True
    return False


def _extra_port(data: Data) -> bool:
    for _, endpoint in _endpoints(data):
        port = endpoint.get("port")
        if isinstance(port, int) and port != EXTRA_PORT and "ports" not in endpoint:
            del endpoint["port"]
            endpoint["ports"] = [port, EXTRA_PORT]
            return True
    return False


def _allow(endpoint: Data) -> Data | None:
    rules = endpoint.get("rules")
    if _is_rest(endpoint) and isinstance(rules, list) and rules:
        first = rules[0]
        if isinstance(first, dict) and isinstance(first.get("allow"), dict):
            return first["allow"]
    return None


def _broader(field: str, value: str) -> Callable[[Data], bool]:
    def widen(data: Data) -> bool:
        for _, endpoint in _endpoints(data):
            allow = _allow(endpoint)
            if allow is not None and allow.get(field) != value:
                allow[field] = value
                return True
        return False

    return widen


def _l4_instead_of_rest(data: Data) -> bool:
    for _, endpoint in _endpoints(data):
        if _is_rest(endpoint):
            for key in ("protocol", "rules", "access", "deny_rules", "enforcement", "path"):
                endpoint.pop(key, None)
            return True
    return False


def _skip_tls(data: Data) -> bool:
    for _, endpoint in _endpoints(data):
        if _is_rest(endpoint) and endpoint.get("tls") != "skip":
            endpoint["tls"] = "skip"
            return True
    return False


def _writable_path(data: Data) -> bool:
    for name in ("filesystem_policy", "filesystem"):
        section = data.get(name)
        if isinstance(section, dict) and isinstance(section.get("read_only"), list):
            read_only = section["read_only"]
            if read_only:
                path = read_only.pop(0)
                section["read_write"] = [*(section.get("read_write") or []), path]
                return True
    return False


def _new_host_in_rule(data: Data) -> bool:
    for rule, endpoint in _endpoints(data):
        added = {"host": NEW_HOST, "port": endpoint.get("port", 443)}
        rule["endpoints"].append(added)
        return True
    return False


def _several(data: Data) -> bool:
    """Four over-reaches in one policy (at least two must apply)."""
    kinds = (_extra_binary, _broader("method", "*"), _extra_port, _writable_path)
    return sum(mutate(data) for mutate in kinds) >= 2


MUTATIONS: dict[str, Callable[[Data], bool]] = {
    "extra binary": _extra_binary,
    "wildcard host": _wildcard_host,
    "extra port": _extra_port,
    "broader path": _broader("path", "/**"),
    "broader method": _broader("method", "*"),
    "L4 instead of REST": _l4_instead_of_rest,
    "skip TLS": _skip_tls,
    "writable path": _writable_path,
    "new host in a rule": _new_host_in_rule,
    "several at once": _several,
}


def _mutated(text: str, mutate: Callable[[Data], bool]) -> str | None:
    data = read_policy_data(text)
    if not isinstance(data, dict):
        return None
    changed: Data = copy.deepcopy(data)
    return dump_text(changed) if mutate(changed) else None


def pairs(limit: int) -> Iterator[tuple[str, str, str]]:
    """(kind, candidate, boundary) for up to ``limit`` corpus policies."""
    entries = [e for e in corpus_entries() if e.expect == "valid"][:limit]
    for entry in entries:
        for kind, mutate in MUTATIONS.items():
            candidate = _mutated(entry.text, mutate)
            if candidate is not None:
                yield kind, candidate, entry.text
        try:
            widened = [v for v in variants(entry.text) if v.kind == "widening"]
        except (AttributeError, TypeError):  # a corpus text that is not a policy mapping
            continue
        for variant in widened:
            kind = "new host rule" if "host" in variant.what else "new writable path"
            yield kind, variant.text, entry.text
    for first, second in pairwise(entries):
        if first.repo == second.repo:
            yield "same repository", first.text, second.text
            yield "same repository", second.text, first.text


def _concrete(path: str) -> str:
    """A path a glob matches: each wildcard replaced by one plain segment."""
    text = path.replace("**", "a").replace("*", "a").replace("?", "a")
    return text if text.startswith("/") else "/" + text


def _exact(text: str) -> bool:
    return not any(char in text for char in "*?[]{}")


def _network_needs(policy: Policy) -> Iterator[Data]:
    for rule in policy.rules:
        binaries = [b for b in rule.binaries if _exact(b)]
        if not binaries:
            continue
        for endpoint in rule.endpoints:
            if not _exact(endpoint.host) or not endpoint.host or not endpoint.ports:
                continue
            need: Data = {"binary": binaries[0], "host": endpoint.host, "port": endpoint.ports[0]}
            if endpoint.allowed_ips:
                need["destination_ip"] = str(next(iter(endpoint.allowed_ips[0]), None) or "")
                if not need["destination_ip"]:
                    continue
            if endpoint.layer == "rest":
                for allow in endpoint.allow_rules:
                    method = "GET" if allow.method in ("*", "") else allow.method.upper()
                    yield {**need, "method": method, "path": _concrete(allow.path or "/")}
            else:
                yield need


def _filesystem_needs(policy: Policy) -> Iterator[Data]:
    for path in policy.filesystem.read_only:
        yield {"path": path, "access": "read"}
    for path in policy.filesystem.read_write:
        yield {"path": path, "access": "write"}


def draw_needs(candidate: str, boundary: str, most: int) -> list[Data]:
    """Up to ``most`` needs from the candidate's own grants that both policies allow,
    spread over the candidate (every k-th of those found)."""
    ours, theirs = (
        load_document(read_policy_data(candidate)),
        load_document(read_policy_data(boundary)),
    )
    if ours is None or theirs is None:
        return []
    found: list[Data] = []
    for raw in (*_network_needs(ours.policy), *_filesystem_needs(ours.policy)):
        try:
            (need,) = read_needs([raw])
        except ValueError:
            continue
        if _allowed(ours.policy, need) and _allowed(theirs.policy, need) and raw not in found:
            found.append(raw)
    step = max(1, len(found) // most) if most else 1
    return found[::step][:most]


def _kept(result: Any) -> int:
    return sum(1 for s in result.needs if s.status == "kept")


def run_needs(args: argparse.Namespace, environment: str) -> None:
    """Each exceeds pair explained with and without needs drawn from its own grants."""
    counts: Counter[str] = Counter()
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
    wanted = set(args.kinds.split(",")) if args.kinds else None
    for kind, candidate, boundary in pairs(args.limit):
        if wanted is not None and kind not in wanted:
            continue
        check = check_boundary(
            candidate, boundary, timeout_ms=args.timeout_ms, environment=environment
        )
        if check.outcome.verdict is not Verdict.EXCEEDS:
            continue
        needs = draw_needs(candidate, boundary, args.needs)
        if not needs:
            counts["pairs without a need to draw"] += 1
            continue
        counts["pairs"] += 1
        counts["needs"] += len(needs)
        plain = explain(candidate, boundary, timeout_ms=args.timeout_ms, environment=environment)
        held = explain(
            candidate, boundary, timeout_ms=args.timeout_ms, environment=environment, needs=needs
        )
        fixed = load_document(read_policy_data(held.fixed_candidate or "version: 1\n"))
        checked = read_needs(needs)
        counts["verified without needs"] += plain.fix_verified
        counts["verified with needs"] += held.fix_verified
        if held.fix_verified and fixed is not None:
            counts["needs in verified fixes"] += len(needs)
            # Kept as reported, and re-evaluated on the fixed candidate independently.
            counts["kept (reported)"] += _kept(held)
            counts["kept (re-evaluated)"] += sum(_allowed(fixed.policy, n) for n in checked)
        if plain.fix_verified:
            before = load_document(read_policy_data(plain.fixed_candidate or "version: 1\n"))
            assert before is not None
            lost = sum(not _allowed(before.policy, n) for n in checked)
            counts["needs the fix without needs drops"] += lost
            counts["pairs where the fix without needs drops one"] += lost > 0
        if dump is not None:
            record = {
                "kind": kind,
                "needs": needs,
                "status": [s.status for s in held.needs],
                "verified": [plain.fix_verified, held.fix_verified],
                "stopped": held.enumeration.stopped_because,
                "candidate": candidate,
                "boundary": boundary,
            }
            dump.write(json.dumps(record) + "\n")
    if dump is not None:
        dump.close()
    print("| exceeds pairs with needs drawn from the candidate's own grants | count |")
    print("|---|---|")
    for name in (
        "pairs",
        "needs",
        "verified without needs",
        "verified with needs",
        "needs in verified fixes",
        "kept (reported)",
        "kept (re-evaluated)",
        "needs the fix without needs drops",
        "pairs where the fix without needs drops one",
        "pairs without a need to draw",
    ):
        print(f"| {name} | {counts[name]} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--timeout-ms", type=int, default=20_000)
    parser.add_argument("--kinds", help="comma-separated pair kinds to run (default: all)")
    parser.add_argument("--dump", help="write one JSON line per exceeds pair to this file")
    parser.add_argument(
        "--needs", type=int, default=0, help="explain with up to N needs per pair (see above)"
    )
    args = parser.parse_args()
    wanted = set(args.kinds.split(",")) if args.kinds else None
    environment = ENVIRONMENT.read_text(encoding="utf-8")
    if args.needs:
        run_needs(args, environment)
        return
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
    counts: Counter[str] = Counter()
    by_kind: Counter[tuple[str, str]] = Counter()
    for kind, candidate, boundary in pairs(args.limit):
        if wanted is not None and kind not in wanted:
            continue
        check = check_boundary(
            candidate, boundary, timeout_ms=args.timeout_ms, environment=environment
        )
        if check.outcome.verdict is not Verdict.EXCEEDS:
            continue
        result = explain(candidate, boundary, timeout_ms=args.timeout_ms, environment=environment)
        kept = result.grants_kept
        if not result.fix_verified or kept is None:
            outcome = "no verified fix"
        elif kept.with_rule_deleted is None or kept.with_fix > kept.with_rule_deleted:
            outcome = "keeps more than deleting"
        else:
            outcome = "keeps no more than deleting"
        counts[outcome] += 1
        counts["all"] += 1
        if kind not in OUTSIDE:
            counts[f"inside: {outcome}"] += 1
            counts["inside: all"] += 1
        by_kind[(kind, outcome)] += 1
        if dump is not None:
            record = {
                "kind": kind,
                "outcome": outcome,
                "stopped": result.enumeration.stopped_because,
                "kept": kept.model_dump() if kept else None,
                "fixes": [v.fix_description for v in result.violations],
                "candidate": candidate,
                "boundary": boundary,
            }
            dump.write(json.dumps(record) + "\n")
    if dump is not None:
        dump.close()
    outcomes = ("keeps more than deleting", "keeps no more than deleting", "no verified fix")
    print("| exceeds pairs | all kinds | without the kinds wholly outside the boundary |")
    print("|---|---|---|")
    for name in ("all", *outcomes):
        print(f"| {name} | {counts[name]} | {counts['inside: ' + name]} |")
    print("\n| pair kind | keeps more | keeps no more | no verified fix |\n|---|---|---|---|")
    for kind in sorted({k for k, _ in by_kind}):
        row = " | ".join(str(by_kind[(kind, o)]) for o in outcomes)
        print(f"| {kind} | {row} |")


if __name__ == "__main__":
    main()

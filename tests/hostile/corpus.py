"""Seeds of the fuzzers: valid documents from tests/data and the pieces hostile text is made of.

The valid policies are every candidate and boundary text of tests/data/boundary_cases.yaml
that the loader accepts; the proposals, credentials and current policies come from
tests/data/proposal_cases.yaml. Mutating valid documents reaches deep into the schema,
where random text would be refused at the first line.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import yaml

from prover.errors import PolicyLoadError
from prover.policy.loader import load_policy
from tests.support import boundary_cases, proposal_cases


@cache
def valid_policy_texts() -> tuple[str, ...]:
    """Distinct policy texts of the boundary cases that load, in file order."""
    texts: dict[str, None] = {}
    for case in boundary_cases():
        for key in ("candidate", "boundary"):
            text = case.get(key)
            if isinstance(text, str) and _loads(text):
                texts[text] = None
    return tuple(texts)


@cache
def valid_policy_documents() -> tuple[Any, ...]:
    """The valid policy texts parsed as plain data (for structured mutation)."""
    return tuple(yaml.safe_load(text) for text in valid_policy_texts())


@cache
def valid_policy_pairs() -> tuple[tuple[str, str], ...]:
    """(candidate, boundary) of every boundary case where both sides load."""
    pairs = []
    for case in boundary_cases():
        candidate, boundary = case.get("candidate"), case.get("boundary")
        if isinstance(candidate, str) and isinstance(boundary, str):
            if _loads(candidate) and _loads(boundary):
                pairs.append((candidate, boundary))
    return tuple(pairs)


@cache
def proposal_seeds() -> tuple[dict[str, Any], ...]:
    """Each proposal case as the texts ``assess_proposal`` takes."""
    seeds = []
    for case in proposal_cases():
        proposal = case.get("proposal")
        if not isinstance(proposal, dict) or not isinstance(case.get("current_policy"), str):
            continue
        rule = proposal.get("rule")
        seeds.append(
            {
                "current": case["current_policy"],
                "proposal": {
                    "rule_name": proposal.get("rule_name"),
                    "rule": yaml.safe_load(rule) if isinstance(rule, str) else rule,
                },
                "credentials": case.get("credentials") or [],
                "mode": case.get("mode", "agent_authored"),
            }
        )
    return tuple(seeds)


def _loads(text: str) -> bool:
    try:
        load_policy(text)
    except PolicyLoadError:
        return False
    return True


ACCEPTED_RISKS_SEED: dict[str, Any] = {
    "accepted_risks": [
        {
            "query": "credential_reach_expansion",
            "reason": "reviewed",
            "accepted_by": "alice",
            "binary": "/usr/bin/curl",
            "endpoint": "api.github.com",
        },
        {"query": "link_local_reach", "reason": "metadata proxy"},
    ]
}

#: Pieces of YAML and JSON syntax, and characters parsers and terminals mishandle.
SYNTAX_FRAGMENTS: tuple[str, ...] = (
    "version: 1",
    "version: 2",
    "version: '1'",
    "version: 1.0",
    "network_policies:",
    "filesystem_policy:",
    "process:",
    "landlock:",
    "read_only:",
    "read_write:",
    "endpoints:",
    "binaries:",
    "- path: /usr/bin/curl",
    "- host: api.example.com",
    "port: 443",
    "ports: [80, 443]",
    "protocol: rest",
    "rules:",
    "- allow: {method: GET, path: /**}",
    "deny_rules:",
    "allowed_ips: [10.0.0.0/8]",
    "run_as_user: root",
    "- /usr",
    "- /tmp/**",
    "  ",
    "    ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    ": ",
    "- ",
    "? ",
    "&a ",
    "*a",
    "&a [*a, *a]",
    "&b {x: *a}",
    "<<: *a",
    "<<",
    "!!python/object/apply:os.system ['true']",
    "!!python/name:builtins.eval",
    "!!binary aGVsbG8=",
    "!!str",
    "!!int",
    "!!float",
    "!!map",
    "!!set",
    "!!omap",
    "!!timestamp 2001-12-14",
    "!custom",
    "!<tag:yaml.org,2002:str>",
    "%YAML 1.1",
    "%YAML 1.2",
    "%YAML 9.9",
    "%TAG ! tag:example.com,2000:",
    "---",
    "...",
    "|",
    ">",
    "|-",
    ">+2",
    "'",
    '"',
    "''",
    '""',
    "#",
    "# comment",
    "\x00",
    "\ufeff",
    "\ufffe",
    "\uffff",
    "\u2028",
    "\u2029",
    "\u0085",
    "\x7f",
    "\x1b[31m",
    "\x08",
    "\x0c",
    "1e999999",
    "9" * 60,
    "-9" * 30,
    "-0",
    "0x1F",
    "0o17",
    "0b101",
    "1_000",
    ".inf",
    "-.inf",
    ".nan",
    "~",
    "null",
    "Null",
    "true",
    "yes",
    "on",
    "y",
    "2001-12-14t21:59:43.10-05:00",
    '"\\u0000"',
    '"\\ud800"',
    '"\\x00"',
    '"\\N"',
    '"\\',
    "é",
    "\U0001d518",
    "\U0001f600",
    "日本",
    "\u202e",
    "\u200b",
    "\\",
    "=",
    "@",
    "`",
    "%",
    "*",
    "**",
    "/**",
    "*.example.com",
    "**.example.com",
    "0.0.0.0/0",
    "::ffff:127.0.0.1",
    "65536",
    "-1",
    "4294967296",
)

#: Scalars that stress one field of an otherwise valid document.
HOSTILE_SCALARS: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    65535,
    65536,
    2**31,
    2**63,
    -(2**63),
    10**40,
    10**400,
    1.5,
    float("inf"),
    float("-inf"),
    float("nan"),
    "",
    " ",
    "1",
    "*",
    "**",
    "***",
    "/",
    "//",
    "/**",
    "/../..",
    "/./",
    "/\x00",
    "\x00",
    "a\nb",
    "\r\n",
    "\t",
    "\x1b[2J",
    "\u202e\u202d",
    "\ud800",
    "\udcff",
    "\ufeff",
    "é",
    "\U0001f600" * 3,
    "*." * 50 + "com",
    "a" * 300,
    "/" + "a/" * 200,
    "127.0.0.1",
    "::1",
    "::ffff:10.0.0.1",
    "10.0.0.0/8",
    "0.0.0.0/0",
    "::/0",
    "999.1.1.1/33",
    "GET",
    "get",
    "HEAD",
    "CONNECT",
    "rest",
    "l4",
    "graphql",
    "enforce",
    "audit",
    "read-only",
    "full",
    "root",
    "0",
    "sandbox",
    "best_effort",
    "hard_requirement",
    "version",
    [],
    {},
    [None],
    [[[]]],
    {"": None},
    {"version": 1},
    {"any": ["*", "**"]},
    {"glob": "*"},
)

#: Keys that an attacker might insert next to the real ones.
HOSTILE_KEYS: tuple[str, ...] = (
    "",
    "version",
    "<<",
    "__proto__",
    "_provider_x",
    "extra",
    "\x00",
    "\u202e",
    "a" * 200,
    "network_policies",
    "deny_rules",
    "allow",
    "include_workdir",
)


def to_json(document: Any) -> str:
    """JSON text of any document, NaN and infinities included (YAML reads them too)."""
    return json.dumps(document, ensure_ascii=False, default=str)

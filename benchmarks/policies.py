"""Generated policy pairs for the benchmarks: realistic shapes at a chosen size.

Every generator is deterministic (seeded), so figures can be reproduced.
"""

from __future__ import annotations

import random

import yaml

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
#: Endpoints that may overlap (any wildcard host on a shared port) must agree on
#: allowed_ips, or the prover rightly reports the pair unsupported (spec §5).
SHARED_IPS = ("8.8.0.0/16",)


def _rest_endpoint(host: str, rng: random.Random, methods: int) -> dict[str, object]:
    rules = [
        {"allow": {"method": m, "path": f"/v1/{host.split('.')[0]}/{m.lower()}/**"}}
        for m in rng.sample(METHODS, methods)
    ]
    return {
        "host": host,
        "port": 443,
        "protocol": "rest",
        "enforcement": "enforce",
        "rules": rules,
    }


def ordinary_pair(rules: int, *, seed: int = 7, exceed: bool = False) -> tuple[str, str]:
    """A boundary of ``rules`` rules (REST, L4 and wildcard hosts) and a narrower candidate.

    With ``exceed`` the candidate's last rule gets a method the boundary lacks.
    """
    rng = random.Random(seed)
    boundary: dict[str, object] = {}
    candidate: dict[str, object] = {}
    for i in range(rules):
        kind = i % 4
        binaries = [{"path": f"/usr/bin/tool{i % 7}"}]
        if kind == 3:
            endpoint: dict[str, object] = {
                "host": f"*.svc{i}.example.com",
                "port": 8443,
                "allowed_ips": list(SHARED_IPS),
            }
            cand_endpoint = dict(endpoint)
        elif kind == 2:
            endpoint = {"host": f"pkg{i}.example.org", "ports": [80, 8080]}
            cand_endpoint = {"host": f"pkg{i}.example.org", "ports": [8080]}
        else:
            endpoint = _rest_endpoint(f"api{i}.example.com", rng, 3)
            cand_endpoint = dict(endpoint)
            cand_endpoint["rules"] = list(endpoint["rules"])[:2]  # type: ignore[index]
        boundary[f"r{i}"] = {"endpoints": [endpoint], "binaries": binaries}
        candidate[f"r{i}"] = {"endpoints": [cand_endpoint], "binaries": binaries}
    if exceed and rules:
        last = candidate[f"r{rules - 1}"]
        last["endpoints"][0] = {  # type: ignore[index]
            "host": f"api{rules - 1}.example.com",
            "port": 443,
            "protocol": "rest",
            "enforcement": "enforce",
            "rules": [{"allow": {"method": "DELETE", "path": "/admin/**"}}],
        }
    return _dump(candidate), _dump(boundary)


def glob_heavy_pair(rules: int, *, seed: int = 11) -> tuple[str, str]:
    """Wildcard hosts with allowed_ips and path globs on both sides (the solver's hard case)."""
    boundary: dict[str, object] = {}
    candidate: dict[str, object] = {}
    for i in range(rules):
        ips = list(SHARED_IPS)
        boundary[f"r{i}"] = {
            "endpoints": [
                {
                    "host": f"**.svc{i}.example.com",
                    "port": 443,
                    "allowed_ips": ips,
                    "protocol": "rest",
                    "enforcement": "enforce",
                    "rules": [
                        {"allow": {"method": "GET", "path": "/data/**"}},
                        {"allow": {"method": "POST", "path": "/data/*/items"}},
                    ],
                }
            ],
            "binaries": [{"path": "/usr/bin/*"}],
        }
        candidate[f"r{i}"] = {
            "endpoints": [
                {
                    "host": f"*.svc{i}.example.com",
                    "port": 443,
                    "allowed_ips": ips,
                    "protocol": "rest",
                    "enforcement": "enforce",
                    "rules": [{"allow": {"method": "GET", "path": "/data/*/x/**"}}],
                }
            ],
            "binaries": [{"path": "/usr/bin/*"}],
        }
    return _dump(candidate), _dump(boundary)


def query_heavy_pair(rules: int) -> tuple[str, str]:
    """REST rules that constrain query parameters with exact and ``*`` matchers."""
    boundary: dict[str, object] = {}
    candidate: dict[str, object] = {}
    keys = max(1, min(4, 120 // max(1, rules)))
    for i in range(rules):
        b_query = {f"k{j}": "*" for j in range(keys)}
        c_query = {f"k{j}": f"v{j}" for j in range(keys)}
        for name, query, target in (("b", b_query, boundary), ("c", c_query, candidate)):
            target[f"r{i}"] = {
                "endpoints": [
                    {
                        "host": f"q{i}.example.com",
                        "port": 443,
                        "protocol": "rest",
                        "enforcement": "enforce",
                        "rules": [{"allow": {"method": "GET", "path": "/search", "query": query}}],
                    }
                ],
                "binaries": [{"path": "/usr/bin/curl"}],
            }
            del name
    return _dump(candidate), _dump(boundary)


def _dump(rules: dict[str, object]) -> str:
    return yaml.safe_dump({"version": 1, "network_policies": rules}, sort_keys=False)

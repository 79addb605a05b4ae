"""One-time costs paid when the server starts rather than by its first calls.

A tool's first call imported the check stages, the runner and the extended reading,
made Z3's first context and built one-time state (compiled patterns, validators) on the
way, some of it on the event loop before the call's deadline started: the first
``assess_proposal`` and ``explain_counterexample`` at ``timeout_ms`` 200 answered 167
and 191 ms late (issue 24). :func:`warm_up` runs each tool's core once on tiny inputs,
with one Z3 solve, before the server takes its first request.
"""

from __future__ import annotations

import json
import logging
import time

log = logging.getLogger(__name__)

#: A pair that only Z3 decides (IP ranges), so that the solver stage is loaded too; over
#: 1 KiB, so that the reader's fast path for larger texts is loaded as well.
_CANDIDATE = (
    """\
version: 1
filesystem_policy:
  read_only:
"""
    + "".join(f"    - /usr/share/warm-up/{index}\n" for index in range(40))
    + """\
network_policies:
  api:
    endpoints:
    - {host: api.example.com, ports: [443], allowed_ips: [10.0.0.0/8]}
    binaries:
    - path: /usr/bin/curl
"""
)
_BOUNDARY = _CANDIDATE.replace("[10.0.0.0/8]", "[10.0.0.0/9, 10.128.0.0/9]")
_WIDER = _CANDIDATE.replace("[10.0.0.0/8]", "[0.0.0.0/0]")
_ENVIRONMENT = "version: 1\nworkdir: /sandbox\nsymlinks: {/bin: usr/bin}\n"
_PROPOSAL = json.dumps(
    {
        "rule_name": "warm",
        "rule": {
            "endpoints": [{"host": "example.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
)
#: Modules the tools import on the event loop at their first call.
_TOOL_MODULES = (
    "prover.run.runner",
    "prover.results.text",
    "prover.explain.compact",
    "server.environment_default",
)

done = False


def warm_up(timeout_ms: int = 10_000) -> float:
    """Import and run what the tools need once; the seconds it took. Idempotent; a
    failure is logged, never raised (the calls then pay for it as before)."""
    global done
    if done:
        return 0.0
    started = time.monotonic()
    try:
        import importlib

        for name in _TOOL_MODULES:
            importlib.import_module(name)
        from prover.api import check_boundary
        from prover.explain import explain
        from prover.proposal import assess_proposal

        check_boundary(_CANDIDATE, _BOUNDARY, timeout_ms=timeout_ms, environment=_ENVIRONMENT)
        assess_proposal(
            _CANDIDATE,
            _PROPOSAL,
            boundary=_BOUNDARY,
            timeout_ms=timeout_ms,
            environment=_ENVIRONMENT,
        )
        explain(_WIDER, _BOUNDARY, timeout_ms=timeout_ms, environment=_ENVIRONMENT)
    except Exception:  # never stop the server from starting
        log.warning("warming up the prover failed; first calls will be slower", exc_info=True)
    done = True
    return time.monotonic() - started


__all__ = ["warm_up"]

"""The middleware checks of the runtime's validator, in its words.

``openshell-policy/src/middleware.rs`` (``validate``) at OpenShell 2f7fb65, called last by
``validate_sandbox_policy``: at most 10 middlewares, names and implementations not empty,
distinct ``order`` values, ``on_error`` empty, ``fail_closed`` or ``fail_open``, an
endpoint selector with at least one include and at most 32 patterns, every pattern a valid
host pattern, and no middleware that must inspect (``on_error`` not ``fail_open``) whose
selector may match an endpoint that skips TLS (``tls: skip``): it could never see that
traffic. Middlewares are visited by name, rules by key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prover.runtime.data import Data, items, number, rules_of, text

if TYPE_CHECKING:  # imported where a policy has middlewares (not on the seed's path)
    from prover.runtime.host_pattern import HostSelector

#: ``openshell-core/src/middleware.rs``.
MAX_MIDDLEWARE_CONFIGS = 10
MAX_MIDDLEWARE_SELECTOR_PATTERNS = 32


def _invalid(name: str, reason: str) -> str:
    return f"middleware config '{name}' is invalid: {reason}"


def _one(name: str, middleware: Data, orders: dict[int, str], policy: Data) -> list[str]:
    found: list[str] = []
    if not name:
        found.append(_invalid(name, "name must not be empty"))
    order = number(middleware, "order")
    if order in orders:
        found.append(
            f"middleware configs '{orders[order]}' and '{name}' use duplicate order {order}"
        )
    orders[order] = name
    if not text(middleware, "middleware"):
        found.append(_invalid(name, "middleware must not be empty"))
    on_error = text(middleware, "on_error")
    if on_error not in ("", "fail_closed", "fail_open"):
        found.append(_invalid(name, f"invalid on_error '{on_error}'"))
    selector = middleware.get("endpoints")
    if not isinstance(selector, dict):
        return [*found, _invalid(name, "endpoint selector is required")]
    include, exclude = items(selector, "include"), items(selector, "exclude")
    if not include:
        found.append(_invalid(name, "endpoint selector must include at least one host pattern"))
    count = len(include) + len(exclude)
    if count > MAX_MIDDLEWARE_SELECTOR_PATTERNS:
        found.append(
            f"middleware config '{name}' has too many selector patterns ({count} > "
            f"{MAX_MIDDLEWARE_SELECTOR_PATTERNS})"
        )
        return found
    from prover.runtime.host_pattern import HostSelector, host_pattern, host_selector

    valid = bool(include)
    for pattern in include + exclude:
        compiled = host_pattern(pattern)
        if isinstance(compiled, str):
            valid = False
            found.append(
                _invalid(name, f"endpoint selector pattern '{pattern}' is invalid: {compiled}")
            )
    compiled_selector = host_selector(include, exclude) if valid else None
    if isinstance(compiled_selector, HostSelector) and on_error in ("", "fail_closed"):
        found += _tls_skip_conflicts(name, compiled_selector, policy)
    return found


def _tls_skip_conflicts(name: str, selector: HostSelector, policy: Data) -> list[str]:
    from prover.runtime.host_pattern import host_pattern

    found: list[str] = []
    for key, rule in rules_of(policy):
        rule_name = text(rule, "name") or key
        for endpoint in items(rule, "endpoints"):
            if text(endpoint, "tls") != "skip":
                continue
            host = text(endpoint, "host")
            pattern = host_pattern(host)
            if not isinstance(pattern, str) and selector.may_match_pattern(pattern):
                found.append(
                    f"middleware config '{name}' selects network policy '{rule_name}' "
                    f"tls: skip endpoint '{host}'"
                )
    return found


def middleware_violations(policy: Data) -> list[str]:
    """Every middleware violation of ``policy`` (authored data)."""
    middlewares = policy.get("network_middlewares")
    if not isinstance(middlewares, dict) or not middlewares:
        return []
    found: list[str] = []
    if len(middlewares) > MAX_MIDDLEWARE_CONFIGS:
        found.append(f"too many middleware configs ({len(middlewares)} > {MAX_MIDDLEWARE_CONFIGS})")
    orders: dict[int, str] = {}
    for name in sorted(middlewares):
        middleware = middlewares[name]
        if isinstance(middleware, dict):
            found += _one(name, middleware, orders, policy)
    return found

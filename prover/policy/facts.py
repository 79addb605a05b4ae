"""Facts derived from one loaded policy alone, kept with it while it is kept.

The memo (:mod:`prover.policy.loader`'s ``LOADED``) hands back the very same policy
object for the same text, so what depends on that policy alone (its resource totals,
whether its shape is inside the model, each endpoint's own reading) is computed once
for it too. Facts are kept only for the policies the memo holds (:func:`keep` when it
takes one, :func:`drop` when it lets one go, so the memo's bounds bound them too), by
object identity, checked with ``is`` (the entry holds the policy, so its id cannot be
reused while it is kept); for any other policy a fact is simply computed. A fact must
be a pure function of the policy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_kept: dict[int, tuple[object, dict[object, object]]] = {}
_lock = threading.Lock()


def keep(policy: object) -> None:
    """Keep facts for ``policy`` from now on (until :func:`drop`); a policy kept
    already keeps the facts it has."""
    with _lock:
        entry = _kept.get(id(policy))
        if entry is None or entry[0] is not policy:
            _kept[id(policy)] = (policy, {})


def drop(policy: object) -> None:
    """Forget ``policy`` and its facts (the memo let it go)."""
    with _lock:
        entry = _kept.get(id(policy))
        if entry is not None and entry[0] is policy:
            del _kept[id(policy)]


def fact(policy: object, name: object, compute: Callable[[], T]) -> T:
    """``compute()``, once per kept policy and ``name``."""
    with _lock:
        entry = _kept.get(id(policy))
    if entry is None or entry[0] is not policy:
        return compute()
    facts = entry[1]
    if name in facts:
        return facts[name]  # type: ignore[return-value]
    value = compute()
    facts[name] = value  # a race computes the same value twice, harmlessly
    return value


def kept_facts(policy: object) -> dict[object, object]:
    """A copy of the facts kept for ``policy`` (tests)."""
    with _lock:
        entry = _kept.get(id(policy))
        return dict(entry[1]) if entry is not None and entry[0] is policy else {}


def forget() -> None:
    """Forget every kept policy (tests)."""
    with _lock:
        _kept.clear()

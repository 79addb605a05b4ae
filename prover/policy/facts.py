"""Facts derived from one loaded policy alone, kept with it while it is kept.

The memo (:mod:`prover.policy.loader`'s ``LOADED``) hands back the very same policy
object for the same text, so what depends on that policy alone (its resource totals,
whether its shape is inside the model) is computed once for it too. Facts are kept only
for policies the memo registered (:func:`keep`), by object identity, checked with
``is`` (the entry holds the policy, so its id cannot be reused while it is kept);
anything else is simply computed. A fact must be a pure function of the policy.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Policies whose facts are kept at most (twice the memo's entries: a policy the memo
#: dropped may still be in use by a check).
MAX_POLICIES = 64

_kept: OrderedDict[int, tuple[object, dict[object, object]]] = OrderedDict()
_lock = threading.Lock()


def keep(policy: object) -> None:
    """Keep facts for ``policy`` from now on, or renew it if it is kept already (the
    policy used least recently beyond the bound is forgotten)."""
    with _lock:
        entry = _kept.get(id(policy))
        if entry is None or entry[0] is not policy:
            _kept[id(policy)] = (policy, {})
        _kept.move_to_end(id(policy))
        while len(_kept) > MAX_POLICIES:
            _kept.popitem(last=False)


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

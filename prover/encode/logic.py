"""Small Boolean helpers that never fall back to Z3's main context."""

from __future__ import annotations

import gc
import queue
import threading
import time
from collections.abc import Callable, Iterable

import z3


def text_value(text: str, ctx: z3.Context) -> z3.SeqRef:
    """``text`` as a Z3 string constant, character for character.

    ``z3.StringVal`` interprets escape sequences (``"\\u{41}"`` becomes ``"A"``), so a
    policy string such as a method ``GE\\u{54}`` would silently read as ``GET``.
    Writing every backslash as ``\\u{5c}`` keeps the text exactly as given.
    """
    return z3.StringVal(text.replace("\\", "\\u{5c}"), ctx)


# -- Boolean connectives without the binding's per-argument checks -------------------
#
# ``z3.And``/``z3.Or`` re-derive the context and coerce and sort-check every argument
# (some 35 µs for four arguments, ten times the cost of the term itself), and a check
# builds hundreds of them. The helpers below take Boolean terms of one context, which
# every caller here has by construction, and call the C API directly.


def literal_value(term: z3.BoolRef) -> bool | None:
    """``True``/``False`` for the literals ``true``/``false``, else ``None`` (what
    ``z3.is_true``/``z3.is_false`` say, in one call)."""
    value = z3.Z3_get_bool_value(term.ctx_ref(), term.as_ast())
    return None if value == 0 else value > 0


def _connective(
    make: Callable[..., object], terms: list[z3.BoolRef], ctx: z3.Context
) -> z3.BoolRef:
    count = len(terms)
    array = (z3.Ast * count)(*[term.as_ast() for term in terms])
    return z3.BoolRef(make(ctx.ref(), count, array), ctx)


def mk_and(terms: list[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    """``And(*terms)`` of two or more Boolean terms of ``ctx``."""
    return _connective(z3.Z3_mk_and, terms, ctx)


def mk_or(terms: list[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    """``Or(*terms)`` of two or more Boolean terms of ``ctx``."""
    return _connective(z3.Z3_mk_or, terms, ctx)


def mk_not(term: z3.BoolRef) -> z3.BoolRef:
    """``Not(term)`` of a Boolean term."""
    ctx = term.ctx
    return z3.BoolRef(z3.Z3_mk_not(ctx.ref(), term.as_ast()), ctx)


def _junction(
    terms: Iterable[z3.BoolRef],
    ctx: z3.Context,
    unit: bool,
    make: Callable[[list[z3.BoolRef], z3.Context], z3.BoolRef],
) -> z3.BoolRef:
    """``make`` of the terms that are not the literal ``unit``; ``unit`` when none is
    left, and the literal ``not unit`` as soon as one term is that literal."""
    kept: list[z3.BoolRef] = []
    for term in terms:
        value = literal_value(term)
        if value is (not unit):
            return z3.BoolVal(not unit, ctx)
        if value is None:
            kept.append(term)
    if not kept:
        return z3.BoolVal(unit, ctx)
    return kept[0] if len(kept) == 1 else make(kept, ctx)


def any_of(terms: Iterable[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    """Disjunction; ``False`` when empty. Literal ``False`` terms are dropped."""
    return _junction(terms, ctx, False, mk_or)


def all_of(terms: Iterable[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    """Conjunction; ``True`` when empty. Literal ``True`` terms are dropped."""
    return _junction(terms, ctx, True, mk_and)


def negate(term: z3.BoolRef) -> z3.BoolRef:
    value = literal_value(term)
    if value is not None:
        return z3.BoolVal(not value, term.ctx)
    return mk_not(term)


RANDOM_SEED = 0


def make_solver(ctx: z3.Context) -> z3.Solver:
    """A solver in ``ctx`` with fixed seeds and without Z3's own SIGINT handler (the
    caller owns SIGINT and cancels through ``Context.interrupt``)."""
    solver = z3.Solver(ctx=ctx)
    solver.set("random_seed", RANDOM_SEED)
    solver.set("smt.random_seed", RANDOM_SEED)
    solver.set("ctrl_c", False)
    return solver


class SolverGaveUp(Exception):
    """Z3 answered ``unknown``; ``reason`` is its ``reason_unknown()`` text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------------------------------
# Memory management around a solve
#
# A large check creates hundreds of thousands of Z3 wrapper objects. Two costs follow:
# a full cyclic collection over them stalls every thread for 0.2-0.3 s (measured on
# 4,000 endpoints), long enough to miss the 100 ms cancellation promise; and dropping
# them costs hundreds of milliseconds (one ``Z3_dec_ref`` each). So the collector is held
# off while solving (the wrappers form no reference cycles: reference counting frees
# them, nothing leaks), and the objects are dropped on a background thread, which lets
# the collector run again only once they are gone.

_DISPOSAL_DELAY_S = 0.05
_disposal: queue.SimpleQueue[tuple[tuple[object, ...], Callable[[], None]]] = queue.SimpleQueue()
_disposer_lock = threading.Lock()
_disposer: threading.Thread | None = None
_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False


def pause_gc() -> None:
    """Hold off cyclic garbage collection; pair with :func:`resume_gc`. Nested and
    concurrent solves share one pause."""
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1


def resume_gc() -> None:
    """End one pause; the collector runs again (if it ran before) after the last one."""
    global _gc_pausers
    with _gc_lock:
        _gc_pausers -= 1
        if _gc_pausers == 0 and _gc_was_enabled:
            gc.enable()


def _dispose_forever() -> None:
    while True:
        pending = [_disposal.get()]
        # Let the submitting threads drop their own references first, so that the last
        # reference (and the cost of freeing) is ours. One delay serves every batch
        # queued meanwhile: a delay per batch let contexts pile up under load.
        time.sleep(_DISPOSAL_DELAY_S)
        while True:
            try:
                pending.append(_disposal.get_nowait())
            except queue.Empty:
                break
        callbacks = [after for _, after in pending]
        pending.clear()
        for after in callbacks:
            after()


def dispose_later(objects: tuple[object, ...], after: Callable[[], None]) -> None:
    """Drop ``objects`` on a background thread, then call ``after``. The caller must not
    use the objects afterwards."""
    global _disposer
    with _disposer_lock:
        if _disposer is None or not _disposer.is_alive():
            _disposer = threading.Thread(target=_dispose_forever, name="z3-disposal", daemon=True)
            _disposer.start()
    _disposal.put((objects, after))

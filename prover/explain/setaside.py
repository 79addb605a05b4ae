"""Past a blocker: set the blocked network rule aside, explain the rest, put it back.

When the check is ``unsupported`` because of one rule of the candidate (a shape the
prover does not model), the rest of the candidate can still be checked and fixed: the
rule is set aside (network rules are keyed by name, so no other field path moves), the
rest is checked again, which finds the next blocker or the violations, and the rule is
put back unchanged into the partly fixed candidate. Nothing here is ever offered as a
verified fix: the blocked rules are still undecided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prover.explain.document import Data, Loaded, load_document, tree_copy
from prover.explain.hints import blocker_for
from prover.explain.models import Blocker
from prover.explain.session import Session
from prover.results import CheckOutcome, Verdict

#: How many blocked rules one explanation sets aside.
MAX_SET_ASIDE = 5

_RULE = re.compile(r"^candidate: network_policies\.([^.\[\]]+)")


@dataclass
class SetAside:
    """The blockers found, the rules set aside, and what was left to explain (``doc``
    is None while the rest still has a shape the prover cannot read)."""

    data: Data
    doc: Loaded | None
    outcome: CheckOutcome
    blockers: list[Blocker] = field(default_factory=list)
    rules: dict[str, object] = field(default_factory=dict)


def blocked_rule(blocker: Blocker, data: Data) -> str | None:
    """The candidate's network rule the blocker points at, if it points at one."""
    rules = data.get("network_policies")
    if not isinstance(rules, dict):
        return None
    for location in blocker.locations:
        match = _RULE.match(location)
        if match and match.group(1) in rules:
            return match.group(1)
    return None


def set_aside(session: Session, data: Data, boundary: Loaded, first: CheckOutcome) -> SetAside:
    """Collect the blockers of ``first`` and of the candidate without each blocked rule,
    until the rest is decided, a blocker is not one rule's, or the limit is reached."""
    state = SetAside(data=data, doc=None, outcome=first)
    while state.outcome.verdict is Verdict.UNSUPPORTED:
        blocker = blocker_for(state.outcome, state.data, boundary.data)
        state.blockers.append(blocker)
        key = blocked_rule(blocker, state.data)
        if key is None or len(state.rules) >= MAX_SET_ASIDE or not session.step_time_left():
            break
        rest: Data = tree_copy(state.data)
        state.rules[key] = rest["network_policies"].pop(key)
        if not rest["network_policies"]:
            del rest["network_policies"]
        state.data, state.outcome = rest, session.check_against_boundary(rest)
    state.doc = load_document(state.data)
    return state


def put_back(original: Data, fixed: Data, rules: dict[str, object]) -> Data:
    """``fixed`` with the rules set aside put back, in the original's order of rules."""
    result: Data = tree_copy(fixed)
    now = result.get("network_policies")
    now = now if isinstance(now, dict) else {}
    merged: dict[str, object] = {}
    for key in original.get("network_policies") or {}:
        if key in rules:
            merged[key] = tree_copy(rules[key])
        elif key in now:
            merged[key] = now[key]
    for key, value in now.items():
        merged.setdefault(key, value)
    result["network_policies"] = merged
    return result

"""The candidate as an editable document: plain data, edits with field paths, YAML text.

Fixes are computed on the policy's plain data (what ``read_policy_data`` returns, keys as
written), never on the normalised model, so that the fixed candidate keeps the author's
names, order and every field the fix does not touch. Edits carry a location tuple for
applying them and render it as a field path for people; paths are never parsed back,
which keeps rule keys containing dots or brackets unambiguous.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from prover.explain.models import FixOp
from prover.extended.reading import read_policy
from prover.policy.loader import load_policy
from prover.policy.model import Policy
from prover.policy.paths import Location, render_path
from prover.policy.reader import read_policy_data
from prover.policy.schema import AuthoredPolicy
from prover.policy.shape import shape_problem
from prover.run.budget import BudgetExhausted

Data = dict[str, Any]

#: The running explanation's checkpoint: every read and dump of a document in this
#: module calls it, so that the explanation's deadline bounds them (a candidate of a
#: thousand REST rules takes a few hundred milliseconds per round trip).
_CHECKPOINT: ContextVar[Callable[[], None] | None] = ContextVar("explain_checkpoint", default=None)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@contextmanager
def reading_under(checkpoint: Callable[[], None]) -> Iterator[None]:
    """Make the document functions of this thread call ``checkpoint`` while reading."""
    token = _CHECKPOINT.set(checkpoint)
    try:
        yield
    finally:
        _CHECKPOINT.reset(token)


def tick() -> None:
    """Call the running explanation's checkpoint, if any (raises at its deadline)."""
    checkpoint = _CHECKPOINT.get()
    if checkpoint is not None:
        checkpoint()


def tree_copy(value: Any) -> Any:
    """A deep copy that never shares subtrees (the reader shares a YAML alias's target)."""
    if isinstance(value, dict):
        return {key: tree_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [tree_copy(item) for item in value]
    return value


def read_data(text: str | bytes) -> Data:
    data = read_policy_data(text, _CHECKPOINT.get())
    if not isinstance(data, dict):
        raise ValueError("policy document is not a mapping")
    copied: Data = tree_copy(data)
    return copied


def dump_text(data: Data) -> str:
    """YAML text of ``data``; JSON (also YAML) if PyYAML's YAML 1.1 quoting would not read
    back identically under the strict YAML 1.2 reader."""
    tick()
    text = yaml.dump(
        data,
        Dumper=_DUMPER,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=4096,
    )
    try:
        if read_policy_data(text, _CHECKPOINT.get()) == data:
            return text
    except BudgetExhausted:
        raise
    except Exception:  # any reader failure: fall back to JSON below
        pass
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Loaded:
    """A document that loads, passes shape validation and normalises."""

    data: Data
    authored: AuthoredPolicy
    policy: Policy


def load_document(data: Data) -> Loaded | None:
    """The document's policy, or None if it is not a checkable policy.

    ``policy`` is the upper bound of the extended reading (:mod:`prover.extended`): what
    the policy may allow, which is what a fix must narrow. For a policy inside the
    reference model it is the reference's normalised policy.
    """
    try:
        authored = load_policy(dump_text(data), _CHECKPOINT.get())
        if shape_problem(authored, extended=True) is not None:
            return None
        reading = read_policy(authored, checkpoint=_CHECKPOINT.get())
        return Loaded(data=data, authored=authored, policy=reading.upper)
    except BudgetExhausted:
        raise  # out of time: the explanation stops (see ``core._out_of_time``)
    except Exception:  # an edit that breaks the policy is simply not an option
        return None


def document_problem(text: str | bytes) -> str | None:
    """Why a policy text that loads is not a checkable document (its first shape
    problem in the extended model), or None."""
    try:
        authored = load_policy(text, _CHECKPOINT.get())
    except BudgetExhausted:
        raise
    except Exception:  # not this function's business: the check reports load errors
        return None
    return shape_problem(authored, extended=True)


@dataclass(frozen=True)
class Edit:
    """One edit: ``location`` addresses a mapping key or a list index.

    ``origin`` marks an ``add`` that puts back a narrowed copy of the entry an earlier
    ``remove`` of the same fix took out at that location (a split endpoint, a path moved
    to ``read_only``), so later references to the copy map to the original entry."""

    op: Literal["replace", "remove", "add"]
    location: Location
    old: Any = None
    new: Any = None
    origin: Location | None = None

    def as_fix_op(self) -> FixOp:
        return FixOp(op=self.op, path=render_path(self.location), old=self.old, new=self.new)


def filesystem_key(data: Any) -> str:
    """The filesystem section's name in ``data``: ``filesystem_policy``, or ``filesystem``
    as mainline's first releases called it (both load)."""
    if isinstance(data, dict) and "filesystem" in data and "filesystem_policy" not in data:
        return "filesystem"
    return "filesystem_policy"


def get_at(data: Any, location: Location) -> Any:
    node = data
    for part in location:
        node = node[part]
    return node


def apply_edit(data: Data, edit: Edit) -> None:
    """Apply one edit in place (``add`` at a list index inserts; at a key sets)."""
    parent = get_at(data, edit.location[:-1])
    last = edit.location[-1]
    if edit.op == "remove":
        del parent[last]
    elif edit.op == "replace":
        parent[last] = tree_copy(edit.new)
    elif isinstance(parent, list):
        assert isinstance(last, int)
        parent.insert(last, tree_copy(edit.new))
    else:
        parent[last] = tree_copy(edit.new)


def apply_edits(data: Data, edits: list[Edit]) -> Data:
    """A new document with ``edits`` applied in order; ``data`` is left unchanged."""
    result: Data = tree_copy(data)
    for edit in edits:
        apply_edit(result, edit)
    return result


def ensure_mapping(data: Data, location: Location, edits: list[Edit]) -> None:
    """Add the missing mappings along ``location`` (recording the edits)."""
    node: Any = data
    for depth, part in enumerate(location):
        if not isinstance(node, dict):
            return
        if part not in node:
            edit = Edit("add", location[: depth + 1], new={})
            apply_edit(data, edit)
            edits.append(edit)
        node = node[part]


def set_value(data: Data, location: Location, value: Any, edits: list[Edit]) -> None:
    """Set ``location`` to ``value`` in place, recording a replace or add edit."""
    ensure_mapping(data, location[:-1], edits)
    parent = get_at(data, location[:-1])
    last = location[-1]
    if isinstance(parent, dict) and last not in parent:
        edit = Edit("add", location, new=tree_copy(value))
    else:
        edit = Edit("replace", location, old=tree_copy(parent[last]), new=tree_copy(value))
    apply_edit(data, edit)
    edits.append(edit)


def remove_value(data: Data, location: Location, edits: list[Edit]) -> None:
    edit = Edit("remove", location, old=tree_copy(get_at(data, location)))
    apply_edit(data, edit)
    edits.append(edit)


def diff_mapping(data: Data, location: Location, new: dict[str, Any], edits: list[Edit]) -> None:
    """Turn the mapping at ``location`` into ``new`` with one edit per changed key."""
    old = get_at(data, location)
    for key in list(old):
        if key not in new:
            remove_value(data, (*location, key), edits)
    for key, value in new.items():
        if key not in old or old[key] != value:
            set_value(data, (*location, key), value, edits)

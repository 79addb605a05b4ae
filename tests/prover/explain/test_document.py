"""The editable document: copies, edits with field paths, and text that reads back."""

from __future__ import annotations

import pytest

from prover.explain.document import (
    Edit,
    apply_edits,
    diff_mapping,
    dump_text,
    read_data,
    set_value,
)
from prover.policy.reader import read_policy_data


def test_an_alias_target_is_copied_so_editing_one_use_leaves_the_other() -> None:
    text = """\
version: 1
network_policies:
  a:
    endpoints: [&ep { host: api.example.com, port: 443 }]
  b:
    endpoints: [*ep]
"""
    data = read_data(text)

    data["network_policies"]["a"]["endpoints"][0]["port"] = 8443

    assert data["network_policies"]["b"]["endpoints"][0]["port"] == 443


@pytest.mark.parametrize(
    "value",
    ["0o17", "1:30", "yes", "on", "1e3", "2001:db8::/32", "0443", "~", "*"],
)
def test_dumped_text_reads_back_identically_under_the_strict_reader(value: str) -> None:
    data = {"version": 1, "process": {"run_as_user": value}}

    assert read_policy_data(dump_text(data)) == data


def test_edits_apply_in_order_without_touching_the_input() -> None:
    data = read_data("version: 1\nfilesystem_policy: {read_only: [/a, /b], read_write: [/c]}\n")
    edits = [
        Edit("remove", ("filesystem_policy", "read_write", 0), old="/c"),
        Edit("add", ("filesystem_policy", "read_only", 2), new="/c"),
        Edit("replace", ("filesystem_policy", "read_only", 0), old="/a", new="/z"),
    ]

    fixed = apply_edits(data, edits)

    assert fixed["filesystem_policy"] == {"read_only": ["/z", "/b", "/c"], "read_write": []}
    assert data["filesystem_policy"]["read_write"] == ["/c"]


def test_setting_a_missing_field_adds_its_parents_and_records_each_edit() -> None:
    data = read_data("version: 1\n")
    edits: list[Edit] = []

    set_value(data, ("landlock", "compatibility"), "hard_requirement", edits)

    assert data["landlock"] == {"compatibility": "hard_requirement"}
    assert [(e.op, e.as_fix_op().path) for e in edits] == [
        ("add", "landlock"),
        ("add", "landlock.compatibility"),
    ]


def test_a_mapping_diff_edits_only_the_changed_keys() -> None:
    data = read_data("version: 1\nx: {a: 1, b: 2, c: 3}\n")
    edits: list[Edit] = []

    diff_mapping(data, ("x",), {"a": 1, "b": 5, "d": 4}, edits)

    assert data["x"] == {"a": 1, "b": 5, "d": 4}
    assert [(e.op, e.as_fix_op().path) for e in edits] == [
        ("remove", "x.c"),
        ("replace", "x.b"),
        ("add", "x.d"),
    ]

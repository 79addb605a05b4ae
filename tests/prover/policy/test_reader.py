"""The reader: YAML/JSON text to plain data, with every parsing limit of spec §2."""

from __future__ import annotations

import pytest

from prover.errors import PolicyLoadError
from prover.policy import reader
from prover.policy.reader import read_policy_data


def _refused(text: str | bytes) -> PolicyLoadError:
    with pytest.raises(PolicyLoadError) as caught:
        read_policy_data(text)
    return caught.value


def test_mapping_keys_are_kept_as_the_text_written() -> None:
    assert read_policy_data("1: a\ntrue: b\n~: c\n0x10: d\n") == {
        "1": "a",
        "true": "b",
        "~": "c",
        "0x10": "d",
    }


@pytest.mark.parametrize(
    "text",
    [
        '{"version": 1, "filesystem_policy": {"read_only": ["/usr"]}}',
        '{\n\t"version":\t1,\n\t"filesystem_policy": {"read_only": ["/usr"]}\n}',
        '{\n"version": 1,\n"filesystem_policy": {\n"read_only": [\n"\\/usr"\n]\n}\n}',
    ],
)
def test_json_text_reads_like_yaml(text: str) -> None:
    assert read_policy_data(text) == {"version": 1, "filesystem_policy": {"read_only": ["/usr"]}}


def test_str_and_bytes_inputs_read_the_same() -> None:
    text = "version: 1\nprocess: {run_as_user: 'é'}\n"
    assert read_policy_data(text) == read_policy_data(text.encode("utf-8"))


def test_a_utf8_byte_order_mark_is_accepted() -> None:
    assert read_policy_data(b"\xef\xbb\xbfversion: 1\n") == {"version": 1}


def test_an_alias_yields_the_anchored_value_without_copying_it() -> None:
    data = read_policy_data("a: &bins [{path: /usr/bin/git}]\nb: *bins\n")
    assert data["a"] == [{"path": "/usr/bin/git"}]
    assert data["b"] is data["a"]


def test_an_anchored_key_can_be_reused_through_an_alias() -> None:
    assert read_policy_data("a: &k name\nb: {*k : 1}\n") == {"a": "name", "b": {"name": 1}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"version: 1\n\x80", "policy file is not valid UTF-8"),
        ("version: 1\nx: \ud800\n", "policy file is not valid UTF-8"),
        ("version: 1\nx: \x00\n", "character YAML does not allow (#x0000"),
        ("", "policy is empty"),
        ("# only a comment\n", "policy is empty"),
        ("---\n", "policy is empty"),
        ("---\n...\n---\nversion: 1\n", "a second document starts at line 3"),
        ("version", "got a scalar (str)"),
        ("[1, 2]", "got a list"),
        ("version: 1\nversion: 1\n", "duplicate key 'version' at line 2"),
        ('{"a": 1, "\\u0061": 2}', "duplicate key 'a' at line 1"),
        ("a:\n  b: 1\n  b: 2\n", "duplicate key 'a.b' at line 3"),
        ("a: &x {b: 1}\nc: {<<: *x}\n", "YAML merge keys ('<<') are not supported"),
        ("a: {!!merge '<<': 1}\n", "YAML merge keys ('<<') are not supported"),
        ("? [a, b]\n: 1\n", "mapping keys must be scalars"),
        ("a: &x [1]\nb: {*x : 1}\n", "mapping keys must be scalars"),
        ("a: *nowhere\n", "YAML alias '*nowhere' refers to no complete anchor"),
        ("a: &x [*x]\n", "YAML alias '*x' refers to no complete anchor"),
        ("a: [1\n", "invalid YAML at line 2"),
        ("a:\n\tb: 1\n", "invalid YAML at line 2, column 1"),
        ("a: 'unterminated\n", "invalid YAML"),
    ],
)
def test_invalid_text_is_refused_with_a_message_naming_the_problem(
    text: str | bytes, message: str
) -> None:
    error = _refused(text)
    assert message in str(error)
    assert "\n" not in str(error)


def test_errors_inside_the_document_carry_the_field_path() -> None:
    assert _refused("a:\n  b: 1\n  b: 2\n").path == "a.b"
    assert _refused("a:\n  b: [x, &y [1], {*y : 2}]\n").path == "a.b[2]"


def test_input_of_exactly_the_size_limit_is_read_and_one_byte_more_is_refused() -> None:
    head = b"version: 1\n#"
    exact = head + b"x" * (reader.MAX_INPUT_BYTES - len(head))
    assert read_policy_data(exact) == {"version": 1}
    assert "4194304-byte input limit" in str(_refused(exact + b"x"))


def test_a_str_over_the_byte_limit_in_utf8_is_refused_even_if_short_in_characters() -> None:
    text = "version: 1\n#" + "é" * (reader.MAX_INPUT_BYTES // 2)
    assert len(text) < reader.MAX_INPUT_BYTES
    assert "4194304-byte input limit" in str(_refused(text))


def _nested_flow(depth: int) -> str:
    return "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


def test_nesting_of_exactly_64_levels_is_read_and_65_is_refused() -> None:
    assert read_policy_data(_nested_flow(64))
    assert "nesting depth exceeds the limit of 64" in str(_refused(_nested_flow(65)))


def test_an_alias_that_would_nest_too_deep_is_refused() -> None:
    deep = "[" * 40 + "]" * 40
    text = f"a: &deep {deep}\nb: " + "[" * 30 + "*deep" + "]" * 30 + "\n"
    assert "nesting depth exceeds the limit of 64" in str(_refused(text))


def _flow_list(count: int) -> str:
    return "a: [" + ", ".join(["0"] * count) + "]\n"


def _flow_map(count: int) -> str:
    return "a: {" + ", ".join(f"k{i}: 0" for i in range(count)) + "}\n"


def test_a_list_of_10000_elements_is_read_and_10001_is_refused() -> None:
    assert len(read_policy_data(_flow_list(10_000))["a"]) == 10_000
    assert "list has more than 10000 elements" in str(_refused(_flow_list(10_001)))


def test_a_mapping_of_10000_keys_is_read_and_10001_is_refused() -> None:
    assert len(read_policy_data(_flow_map(10_000))["a"]) == 10_000
    assert "mapping has more than 10000 keys" in str(_refused(_flow_map(10_001)))


def test_the_node_limit_counts_nodes_as_written() -> None:
    # Root mapping, key, list: 3 nodes, plus the elements.
    rows = [f"b{i}: [" + ", ".join(["0"] * 9_999) + "]" for i in range(10)]
    text = "\n".join(rows) + "\n"  # 1 + 10 * (1 + 1 + 9,999) = 100,011 nodes
    assert "limit of 100000 YAML nodes" in str(_refused(text))
    assert read_policy_data("\n".join(rows[:9]) + "\n")


def test_the_node_limit_counts_every_alias_as_the_subtree_it_stands_for() -> None:
    items = ", ".join(["0"] * 5_000)
    uses = ", ".join(["*x"] * 20)
    assert "counting alias expansions" in str(_refused(f"a: &x [{items}]\nb: [{uses}]\n"))


def test_one_hundred_aliases_are_allowed_and_the_hundred_and_first_is_refused() -> None:
    anchors = "\n".join(f"a{i}: &a{i} {i}" for i in range(20))
    uses = ", ".join(f"*a{i % 20}" for i in range(100))
    assert read_policy_data(f"{anchors}\nb: [{uses}]\n")
    assert "more than 100 YAML aliases" in str(_refused(f"{anchors}\nb: [{uses}, *a0]\n"))


def test_the_alias_anchor_ratio_is_enforced_once_100_aliases_are_used() -> None:
    anchors = "\n".join(f"a{i}: &a{i} {i}" for i in range(19))
    uses = ", ".join(f"*a{i % 19}" for i in range(100))
    error = _refused(f"{anchors}\nb: [{uses}]\n")
    assert "100 YAML aliases for 19 anchors" in str(error)
    assert read_policy_data("a: &a 1\nb: [" + ", ".join(["*a"] * 99) + "]\n")


def test_scalar_bytes_count_alias_expansions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_SCALAR_BYTES", 1_000)
    assert read_policy_data("a: &x " + "y" * 400 + "\nb: *x\n")
    error = _refused("a: &x " + "y" * 400 + "\nb: [*x, *x]\n")
    assert "scalars exceed the limit of 1000 bytes" in str(error)


def test_the_event_limit_is_enforced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_EVENTS", 20)
    assert read_policy_data("a: [1, 2, 3]\n")
    assert "limit of 20 YAML events" in str(_refused("a: [" + ", ".join(["1"] * 20) + "]\n"))


class _Stop(Exception):
    pass


def test_reading_a_large_policy_calls_the_checkpoint_which_may_stop_it() -> None:
    rules = "".join(
        f"  r{i}: {{endpoints: [{{host: h{i}.example, port: 443}}]}}\n" for i in range(2_000)
    )
    text = "version: 1\nnetwork_policies:\n" + rules
    calls: list[int] = []
    read_policy_data(text, checkpoint=lambda: calls.append(1))
    assert len(calls) >= 5  # about 16,000 events, one call per 2,048

    def stop() -> None:
        raise _Stop

    with pytest.raises(_Stop):
        read_policy_data(text, checkpoint=stop)


def test_a_small_policy_is_read_without_calling_the_checkpoint() -> None:
    def never() -> None:
        raise AssertionError("checkpoint called for a tiny policy")

    assert read_policy_data("version: 1\n", checkpoint=never) == {"version": 1}

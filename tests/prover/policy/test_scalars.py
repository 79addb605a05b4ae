"""Scalar resolution (YAML 1.2 core schema) and the safe tag set, read through the reader."""

from __future__ import annotations

import math

import pytest

from prover.errors import PolicyLoadError
from prover.policy.reader import read_policy_data


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: yes", "yes"),
        ("a: no", "no"),
        ("a: on", "on"),
        ("a: 0443", 443),
        ("a: 0o17", 15),
        ("a: 0x1F", 31),
        ("a: -7", -7),
        ("a: 1:30", "1:30"),
        ("a: 2024-01-01", "2024-01-01"),
        ("a: 1.5", 1.5),
        ("a: 1e3", 1000.0),
        ("a: .inf", math.inf),
        ("a: -.Inf", -math.inf),
        ("a: ~", None),
        ("a: null", None),
        ("a:", None),
        ("a: True", True),
        ("a: FALSE", False),
        ("a: '443'", "443"),
        ('a: "true"', "true"),
        ("a: !!str 443", "443"),
        ("a: ! 443", "443"),
        ("a: !!int '443'", 443),
        ("a: !!float 1", 1.0),
        ("a: !!bool true", True),
        ("a: !!null ''", None),
        ("a: |\n  x\n", "x\n"),
        ("a: 0x", "0x"),
    ],
)
def test_scalars_resolve_with_the_yaml_1_2_core_schema(text: str, expected: object) -> None:
    assert read_policy_data(text) == {"a": expected}


def test_a_nan_scalar_is_read_as_a_float_nan() -> None:
    value = read_policy_data("a: .nan")["a"]
    assert isinstance(value, float) and math.isnan(value)


def test_a_long_plain_key_is_text_not_an_integer() -> None:
    key = "9" * 60
    assert read_policy_data(f"{key}: 1") == {key: 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!set {x}\n", "unsupported YAML tag '!!set'"),
        ("a: !!timestamp 2024-01-01\n", "unsupported YAML tag '!!timestamp'"),
        ("a: !!binary aGk=\n", "unsupported YAML tag '!!binary'"),
        ("a: !custom x\n", "unsupported YAML tag '!custom'"),
        ("a: !!python/name:os.system\n", "unsupported YAML tag '!!python/name:os.system'"),
        ("a: !!map [1]\n", "unsupported YAML tag '!!map'"),
        ("a: !!int abc\n", "value 'abc' at line 1 is not a valid !!int"),
        ("a: !!bool yes\n", "is not a valid !!bool"),
        ("a: " + "9" * 41 + "\n", "more than 40 digits"),
        ("a: {!!python/name:x k: 1}\n", "unsupported YAML tag '!!python/name:x'"),
    ],
)
def test_unsafe_tags_and_invalid_tagged_values_are_refused(text: str, message: str) -> None:
    with pytest.raises(PolicyLoadError) as caught:
        read_policy_data(text)
    assert message in str(caught.value)

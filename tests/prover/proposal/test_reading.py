"""Limits of the small-document reader."""

from __future__ import annotations

import pytest

from prover.errors import ProposalError
from prover.proposal.reading import MAX_INPUT_BYTES, read_document


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &x [1]\nb: *x\n", "aliases are not allowed"),
        ("a: 1\na: 2\n", "duplicate key 'a'"),
        ("base: {a: 1}\nother:\n  <<: {b: 2}\n", "merge keys"),
        ("a: 1\n---\nb: 2\n", "expected one YAML document"),
        ("a: [\n", "invalid YAML at line"),
        (b"\xff", "not valid UTF-8"),
        ("[" * 2000 + "]" * 2000, "nested too deeply"),
    ],
)
def test_unsafe_or_broken_documents_are_refused(text: str | bytes, message: str) -> None:
    with pytest.raises(ProposalError) as raised:
        read_document(text, "credentials")
    assert str(raised.value).startswith("credentials: ")
    assert message in str(raised.value)


def test_oversized_input_is_refused_before_parsing() -> None:
    with pytest.raises(ProposalError, match="exceeds"):
        read_document(b"a" * (MAX_INPUT_BYTES + 1), "registry")


def test_json_and_yaml_read_the_same() -> None:
    assert (
        read_document('{"a": [1, "x"]}', "x") == read_document("a: [1, x]", "x") == {"a": [1, "x"]}
    )

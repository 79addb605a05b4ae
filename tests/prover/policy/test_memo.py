"""Policies kept by their text: bounds, and no answer changes when the memo answers."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from prover.api import check_boundary
from prover.extended.reading import _readings
from prover.policy import facts
from prover.policy.loader import LOADED, load_policy_pair, policy_data, validate_policy
from prover.policy.memo import TextMemo
from tests.corpus import corpus_entries
from tests.support import boundary_cases


@pytest.fixture(autouse=True)
def fresh_memo() -> Iterator[None]:
    LOADED.clear()
    facts.forget()
    yield
    LOADED.clear()
    facts.forget()


def test_the_oldest_entry_goes_first_and_a_read_renews_an_entry() -> None:
    memo: TextMemo[int] = TextMemo(entries=2)
    memo.put("mainline", "a", 1)
    memo.put("mainline", "b", 2)
    assert memo.get("mainline", "a") == 1  # "a" is now the newest
    memo.put("mainline", "c", 3)
    assert memo.get("mainline", "b") is None
    assert (memo.get("mainline", "a"), memo.get("mainline", "c")) == (1, 3)
    assert memo.get("reference", "a") is None  # another reading is another key


def test_long_texts_are_never_kept_and_the_total_is_bounded() -> None:
    memo: TextMemo[int] = TextMemo(entries=10, text_bytes=4, total_bytes=6)
    memo.put("mainline", "12345", 1)
    assert len(memo) == 0
    for text in ("aaaa", "bbb", "cc"):
        memo.put("mainline", text, len(text))
    assert [text for _, text, _ in memo.values()] == ["bbb", "cc"]  # 4 + 3 + 2 > 6


def test_a_pair_read_again_comes_from_the_memo_as_the_same_objects() -> None:
    case = boundary_cases()[0]
    first = load_policy_pair(case["candidate"], case["boundary"])
    again = load_policy_pair(case["candidate"], case["boundary"])
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert LOADED.hits == 2


def test_invalid_policies_are_not_kept() -> None:
    with pytest.raises(Exception, match="invalid"):
        load_policy_pair("version: 1\nnetwork_policies: 3\n", "version: 1\n")
    assert [text for _, text, _ in LOADED.values()] == ["version: 1\n"]


def _outcome(candidate: str, boundary: str) -> object:
    check = check_boundary(candidate, boundary)
    return check.outcome, check.receipt.readings, check.receipt.decided_by


def test_every_case_answers_the_same_from_the_memo_and_no_check_edits_a_kept_policy() -> None:
    """Each shared case and corpus pair twice (the second time every policy comes from
    the memo, with its facts); then every kept policy still equals a fresh load."""
    pairs = [(case["candidate"], case["boundary"]) for case in boundary_cases()]
    texts = [entry.text for entry in corpus_entries() if entry.expect == "valid"]
    rng = random.Random(17)
    pairs += [(rng.choice(texts), rng.choice(texts)) for _ in range(60)]
    pairs += [(text, text.replace("443", "8443")) for text in texts[:20]]
    kept_any = checked_readings = False
    for candidate, boundary in pairs:
        LOADED.clear()
        facts.forget()
        first = _outcome(candidate, boundary)
        again = _outcome(candidate, boundary)
        assert again == first, (candidate, boundary)
        for reading, text, (data, policy) in LOADED.values():
            kept_any = True
            fresh_data = policy_data(text, reference=reading == "reference")
            assert data == fresh_data
            fresh = validate_policy(fresh_data)
            assert policy.model_dump() == fresh.model_dump()
            for name, value in facts.kept_facts(policy).items():
                if isinstance(name, tuple) and name[0] == "endpoint readings":
                    assert value == _readings(policy, name[1])  # never edited in place
                    checked_readings = True
    assert kept_any
    assert checked_readings


def test_facts_are_computed_once_per_kept_policy_only() -> None:
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return 7

    kept, other = object(), object()
    facts.keep(kept)
    assert [facts.fact(kept, "n", compute) for _ in range(3)] == [7, 7, 7]
    assert [facts.fact(other, "n", compute) for _ in range(3)] == [7, 7, 7]
    assert len(calls) == 4  # once for the kept policy, every time for the other


def test_facts_live_exactly_as_long_as_the_memo_holds_their_policy() -> None:
    small = "version: 1\n"
    large = "version: 1\n" + "# padding\n" * 30_000  # over the memo's size of one text
    (policy, _) = load_policy_pair(small, large)
    facts.fact(policy, "n", lambda: 7)
    assert facts.kept_facts(policy) == {"n": 7}
    assert [text for _, text, _ in LOADED.values()] == [small]  # the large one is not kept
    for index in range(LOADED.entries):  # new policies push the first one out
        load_policy_pair(f"version: 1\n# {index}\n", small)
        assert facts.kept_facts(policy) == {"n": 7}  # renewed by its own use each time
    for index in range(LOADED.entries):
        load_policy_pair(f"version: 1\n# other {index}\n", f"version: 1\n# more {index}\n")
    assert facts.kept_facts(policy) == {}
    assert len(facts._kept) == len(LOADED)

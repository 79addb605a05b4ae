"""Mapping working-copy locations back to the original candidate."""

from __future__ import annotations

from prover.explain.document import Edit, apply_edits
from prover.explain.origin import original_location

ENDPOINTS = ("network_policies", "n", "endpoints")


def _split(index: int, copies: int) -> list[Edit]:
    """Endpoint ``index`` replaced by ``copies`` narrowed copies, as the split fix does."""
    location = (*ENDPOINTS, index)
    edits = [Edit("remove", location)]
    edits += [
        Edit("add", (*ENDPOINTS, index + k), new={"host": f"h{k}"}, origin=location)
        for k in range(copies)
    ]
    return edits


def test_an_unchanged_entry_moves_with_removals_and_additions() -> None:
    edits = [*_split(0, 3)]
    # The original endpoint 1 is now at 3 (two copies more before it).
    assert original_location((*ENDPOINTS, 3, "host"), edits) == (*ENDPOINTS, 1, "host")


def test_a_narrowed_copy_maps_to_the_entry_it_was_made_from_only_when_asked() -> None:
    edits = [Edit("remove", (*ENDPOINTS, 0)), *_split(1, 2)]
    for copy in (1, 2):
        inside = (*ENDPOINTS, copy, "rules", 1)
        assert original_location(inside, edits) is None
        # The copy derives from the original endpoint 2 (endpoint 0 was removed first).
        assert original_location(inside, edits, nearest=True) == (*ENDPOINTS, 2)


def test_an_entry_inside_a_replaced_value_maps_to_that_value() -> None:
    rules = (*ENDPOINTS, 1, "rules")
    edits = [Edit("remove", (*ENDPOINTS, 0)), Edit("replace", rules, old=[1], new=[1, 2])]
    assert original_location((*rules, 1), edits) is None
    assert original_location((*rules, 1), edits, nearest=True) == (*ENDPOINTS, 2, "rules")


def test_an_entry_added_from_nothing_has_no_original() -> None:
    edits = [Edit("add", (*ENDPOINTS, 0), new={"host": "x"})]
    assert original_location((*ENDPOINTS, 0), edits, nearest=True) is None


def test_the_mapping_agrees_with_applying_the_edits() -> None:
    original = {"network_policies": {"n": {"endpoints": [{"host": f"e{i}"} for i in range(5)]}}}
    edits = [Edit("remove", (*ENDPOINTS, 1)), *_split(2, 2), Edit("remove", (*ENDPOINTS, 0))]
    edited = apply_edits(original, edits)
    hosts = [e["host"] for e in edited["network_policies"]["n"]["endpoints"]]
    assert hosts == ["e2", "h0", "h1", "e4"]
    assert original_location((*ENDPOINTS, 0), edits) == (*ENDPOINTS, 2)
    assert original_location((*ENDPOINTS, 3), edits) == (*ENDPOINTS, 4)
    for copy in (1, 2):
        assert original_location((*ENDPOINTS, copy), edits, nearest=True) == (*ENDPOINTS, 3)

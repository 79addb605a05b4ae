"""Syntactic containment of host, path and binary globs (spec §9.2), against the
ground-truth matchers of ``prover.concrete.glob``."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.checks import glob_containment
from prover.checks.glob_containment import accepts, binary_within, host_within, path_within
from prover.concrete.glob import binary_matches, host_matches, path_matches

HOSTS_WITHIN = [
    ("*.svc3.example.com", "**.svc3.example.com"),
    ("*.svc3.example.com", "*.svc3.example.com"),
    ("**.svc3.example.com", "**.svc3.example.com"),
    ("api.example.com", "*.example.com"),
    ("API.Example.com", "*.example.com"),
    ("api.example.com", "api*.example.com"),
    ("api-v2.example.com", "api*.example.com"),
    ("*.api.example.com", "**.example.com"),
    ("**.api.example.com", "**.example.com"),
    ("api*.example.com", "*.example.com"),
    ("*-api.example.com", "*.example.com"),
    ("a*b.example.com", "a*.example.com"),
    ("*.*.example.com", "**.example.com"),
    ("deep.api.example.com", "**.example.com"),
    ("*.example.com", "**"),
    ("*.example.com", "**.com"),
    ("x.*.example.com", "**.example.com"),
]

HOSTS_NOT_WITHIN = [
    ("**.svc3.example.com", "*.svc3.example.com"),  # deep.x.svc3 escapes one label
    ("*.svc3.example.com", "*.svc4.example.com"),
    ("*.svc3.example.com", "**.vc3.example.com"),  # a.svc3.example.com is not *.vc3...
    ("example.com", "**.example.com"),  # ** needs the dot before the suffix
    ("example.com", "*.example.com"),
    ("*.example.com", "api.example.com"),
    ("*.example.com", "api*.example.com"),
    ("api*.example.com", "api-*.example.com"),  # api.example.com
    ("*.example.com", "*.example.org"),
    ("*.example.com", "?.example.com"),
    ("*.api.example.com", "*.example.com"),
    ("**.example.com", "*.*.example.com"),
    ("*.example.com", "*a.example.com"),
]


@pytest.mark.parametrize(("inner", "outer"), HOSTS_WITHIN)
def test_host_glob_inside_a_wider_glob_is_within(inner: str, outer: str) -> None:
    assert host_within(inner, outer)


@pytest.mark.parametrize(("inner", "outer"), HOSTS_NOT_WITHIN)
def test_host_glob_near_misses_are_not_within(inner: str, outer: str) -> None:
    assert not host_within(inner, outer)


PATHS_WITHIN = [
    ("/data/*/x/**", "/data/**"),
    ("/data/*/items", "/data/**"),
    ("/data/*/items", "/data/*/items"),
    ("/a/b", "/a/**/b"),
    ("/a/x/y/b", "/a/**/b"),
    ("/a/**/b", "/a/**"),
    ("/a/**/b", "/**/b"),
    ("/a/*", "/a/**"),
    ("/a/", "/a/**"),
    ("/a/**/**/b", "/a/**/b"),
    ("/v1/items", ""),
    ("", "/**"),  # an action path starts with "/" (spec §9.1)
    ("**", "/**"),
    ("/**", ""),
    ("/a*b/c", "/a*/c"),
    ("/a/**/b/**", "/a/**"),
    ("/v1/*/get/**", "/v1/**"),
]

PATHS_NOT_WITHIN = [
    ("/data/**", "/data/*/x/**"),
    ("/a", "/a/**"),  # /a/** does not match /a
    ("/a/**", "/a/*"),  # /a/x/y
    ("/a/*/b", "/a/*"),
    ("/a/**/b", "/a/*/b"),  # /a/b and /a/x/y/b
    ("/a/b", "/a/*/b"),
    ("/data/*/items", "/data/*/item"),
    ("/data/x", "/Data/**"),  # paths are case-sensitive
    ("", "/a/**"),
    ("/a*", "/a/**"),
    ("/a/*", "/a/x*"),
    ("/a/**", "/a/**/b"),
    ("/**/b", "/a/**/b"),
]


@pytest.mark.parametrize(("inner", "outer"), PATHS_WITHIN)
def test_path_glob_inside_a_wider_glob_is_within(inner: str, outer: str) -> None:
    assert path_within(inner, outer)


@pytest.mark.parametrize(("inner", "outer"), PATHS_NOT_WITHIN)
def test_path_glob_near_misses_are_not_within(inner: str, outer: str) -> None:
    assert not path_within(inner, outer)


@pytest.mark.parametrize(
    ("inner", "outer", "expected"),
    [
        ("/usr/bin/curl", "/usr/bin/*", True),
        ("/usr/bin/*", "/usr/bin/*", True),
        ("/usr/bin/*", "/usr/**", True),
        ("/usr/bin/*", "/**", True),
        ("/usr/bin/*", "/usr/bin/curl", False),
        ("/usr/**", "/usr/bin/*", False),
        ("/usr/bin/curl", "/usr/bin/curl", True),
        ("/usr/bin/curl", "/usr/bin/curl2", False),
        ("/opt/tool", "/usr/**", False),
    ],
)
def test_binary_globs_are_compared_as_path_globs(inner: str, outer: str, expected: bool) -> None:
    assert binary_within(inner, outer) is expected


def test_containment_gives_up_rather_than_guessing_past_its_state_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caches = (glob_containment.host_within, glob_containment._hosts_within)
    assert host_within("*a*.example.com", "*.example.com")
    monkeypatch.setattr(glob_containment, "MAX_PAIRS", 1)
    for cache in caches:
        cache.cache_clear()
    try:
        assert not host_within("*a*.example.com", "*.example.com")
    finally:
        for cache in caches:
            cache.cache_clear()


# -- the automata read the spec as the ground-truth matchers do ------------------------
_HOST_PIECES = st.sampled_from(["a", "b", ".", "*", "**", "A"])
_PATH_PIECES = st.sampled_from(["a", "b", "/", "*", "**", "/**/", "/**", "."])
_SUBJECTS = st.text(alphabet="aAb./é", max_size=9)


@settings(max_examples=300, deadline=None)
@given(st.lists(_HOST_PIECES, max_size=7).map("".join), _SUBJECTS)
def test_host_automaton_agrees_with_the_concrete_matcher(pattern: str, host: str) -> None:
    assert accepts(pattern, host, host=True) is host_matches(pattern, host)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PATH_PIECES, max_size=7).map("".join), _SUBJECTS)
def test_path_automaton_agrees_with_the_concrete_matcher(pattern: str, path: str) -> None:
    assert accepts(pattern, path, host=False) is binary_matches(pattern, path)


# -- soundness: whatever "within" says, every matched string agrees ----------------------
def _instances(pattern: str, fills: list[str], *, sep: str) -> list[str]:
    """Strings made from ``pattern`` by replacing each ``**``/``*`` with fills."""
    pieces: list[list[str]] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            pieces.append(fills)
            index += 2
        elif pattern[index] == "*":
            pieces.append([f for f in fills if sep not in f])
            index += 1
        else:
            pieces.append([pattern[index]])
            index += 1
    out = []
    for combo in itertools.islice(itertools.product(*pieces), 400):
        out.append("".join(combo))
    return out


_HOST_FILLS = ["", "a", "b", "x.y", ".", "ab.", "é"]
_PATH_FILLS = ["", "a", "b", "x/y", "/", "a/", "é", "/a"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_HOST_PIECES, min_size=1, max_size=6).map("".join),
    st.lists(_HOST_PIECES, min_size=1, max_size=6).map("".join),
    st.lists(st.text(alphabet="ab.é", max_size=7), max_size=10),
)
def test_host_within_is_never_contradicted_by_a_matched_host(
    inner: str, outer: str, extra: list[str]
) -> None:
    if not host_within(inner, outer):
        return
    for host in [*_instances(inner.lower(), _HOST_FILLS, sep="."), *extra]:
        if host_matches(inner, host):
            assert host_matches(outer, host), (inner, outer, host)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PATH_PIECES, min_size=1, max_size=6).map("".join),
    st.lists(_PATH_PIECES, min_size=1, max_size=6).map("".join),
    st.lists(st.text(alphabet="ab/.é", max_size=7).map(lambda s: "/" + s), max_size=10),
)
def test_path_within_is_never_contradicted_by_a_matched_path(
    inner: str, outer: str, extra: list[str]
) -> None:
    within = path_within(inner, outer)
    binary = binary_within(inner, outer)
    for path in [*_instances(inner, _PATH_FILLS, sep="/"), *extra]:
        if not path.startswith("/"):
            continue  # outside the action domain (spec §9.1)
        if within and path_matches(inner, path):
            assert path_matches(outer, path), (inner, outer, path)
        if binary and binary_matches(inner, path):
            assert binary_matches(outer, path), (inner, outer, path)


@st.composite
def _widened(draw: st.DrawFn, pieces: st.SearchStrategy[str], root: str) -> tuple[str, str]:
    """A pattern and a mutation of it that is often (not always) wider."""
    inner = draw(st.lists(pieces, min_size=1, max_size=6))
    outer = list(inner)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(outer) - 1))
        outer[at] = draw(st.sampled_from(["*", "**", "", outer[at] + "*", "*" + outer[at]]))
    if draw(st.booleans()):
        outer = [*outer[: draw(st.integers(0, len(outer)))], draw(st.sampled_from(["**", "/**"]))]
    return root + "".join(inner), root + "".join(outer)


@settings(max_examples=300, deadline=None)
@given(_widened(_HOST_PIECES, ""))
def test_host_within_holds_on_widened_globs(pair: tuple[str, str]) -> None:
    inner, outer = pair
    if host_within(inner, outer):
        for host in _instances(inner.lower(), _HOST_FILLS, sep="."):
            if host_matches(inner, host):
                assert host_matches(outer, host), (inner, outer, host)


@settings(max_examples=300, deadline=None)
@given(_widened(_PATH_PIECES, "/"))
def test_path_within_holds_on_widened_globs(pair: tuple[str, str]) -> None:
    inner, outer = pair
    if path_within(inner, outer):
        for path in _instances(inner, _PATH_FILLS, sep="/"):
            if path_matches(inner, path):
                assert path_matches(outer, path), (inner, outer, path)


def test_the_property_tests_can_fail_on_a_wrong_claim() -> None:
    """The sampled strings do expose the classic near miss (guards the generator)."""
    instances = _instances("**.svc3.example.com", _HOST_FILLS, sep=".")
    assert any(
        host_matches("**.svc3.example.com", h) and not host_matches("*.svc3.example.com", h)
        for h in instances
    )
    paths = _instances("/data/**", _PATH_FILLS, sep="/")
    assert any(path_matches("/data/**", p) and not path_matches("/data/*/x/**", p) for p in paths)

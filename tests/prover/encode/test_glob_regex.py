"""The Z3 glob regexes accept exactly what the concrete glob matchers accept (§9.2)."""

from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.concrete.glob import binary_matches, host_matches, path_matches
from prover.encode.globs import GlobCompiler

CTX = z3.Context()
GLOBS = GlobCompiler(CTX)


def accepts(regex: z3.ReRef, subject: str) -> bool:
    solver = z3.Solver(ctx=CTX)
    solver.add(z3.InRe(z3.StringVal(subject, CTX), regex))
    result = solver.check()
    assert result != z3.unknown
    return result == z3.sat


HOST_EXAMPLES = [
    ("*.example.com", "api.example.com", True),
    ("*.example.com", "_service.example.com", True),
    ("*.example.com", ".example.com", True),
    ("*.example.com", "é.example.com", True),
    ("*.example.com", "-api.example.com", True),
    ("*.example.com", "deep.api.example.com", False),
    ("*.example.com", "example.com", False),
    ("**.example.com", "deep.api.example.com", True),
    ("**.example.com", "api..example.com", True),
    ("**.example.com", "example.com", False),
    ("api*.example.com", "api.example.com", True),
    ("api*.example.com", "api-v2.example.com", True),
    ("api*.example.com", "api_internal.example.com", True),
    ("api*.example.com", "xapi.example.com", False),
    ("api.example.com", "api.example.com", True),
    ("api.example.com", "api.example.com.", False),
    ("**", "", True),
    ("**", "any.thing", True),
    ("***.example.com", "a.b.example.com", True),
]

PATH_EXAMPLES = [
    ("/a/**/b", "/a/b", True),
    ("/a/**/b", "/a/x/b", True),
    ("/a/**/b", "/a/x/y/b", True),
    ("/a/**/b", "/a/xb", False),
    ("/a/**", "/a/", True),
    ("/a/**", "/a/x/y", True),
    ("/a/**", "/a", False),
    ("/**", "/", True),
    ("/**", "/any/path/at/all", True),
    ("/items/*", "/items/é", True),
    ("/items/*", "/items/a/b", False),
    ("/items/*", "/items/", True),
    ("/a/x**/b", "/a/xyz/b", True),
    ("/a/x**/b", "/a/x/y/b", False),
    ("/a/**/**/b", "/a/b", True),
    ("/A", "/a", False),
    ("**", "", True),
    ("", "/anything", True),
]


@pytest.mark.parametrize(("pattern", "host", "expected"), HOST_EXAMPLES)
def test_host_regex_matches_the_spec_examples(pattern: str, host: str, expected: bool) -> None:
    assert accepts(GLOBS.host(pattern), host) is expected
    assert host_matches(pattern, host) is expected


@pytest.mark.parametrize(("pattern", "path", "expected"), PATH_EXAMPLES)
def test_path_regex_matches_the_spec_examples(pattern: str, path: str, expected: bool) -> None:
    assert accepts(GLOBS.path(pattern or "**"), path) is expected
    assert path_matches(pattern, path) is expected


def test_empty_binary_pattern_matches_only_the_empty_string() -> None:
    assert accepts(GLOBS.path(""), "")
    assert not accepts(GLOBS.path(""), "/usr/bin/curl")
    assert binary_matches("", "") and not binary_matches("", "/usr/bin/curl")


def test_compiled_regexes_are_cached_per_kind_and_pattern() -> None:
    globs = GlobCompiler(z3.Context())
    assert globs.host("*.a") is globs.host("*.a")
    assert globs.path("*.a") is not globs.host("*.a")


PATTERN_CHARS = st.sampled_from("ab.-/*")
SUBJECT_CHARS = st.sampled_from("ab.-/é")
patterns = st.text(PATTERN_CHARS, max_size=8)
subjects = st.text(SUBJECT_CHARS, max_size=8)


@settings(max_examples=150, deadline=None)
@given(pattern=patterns, subject=subjects)
def test_host_regex_agrees_with_the_concrete_matcher(pattern: str, subject: str) -> None:
    assert accepts(GLOBS.host(pattern), subject) is host_matches(pattern, subject)


@settings(max_examples=150, deadline=None)
@given(pattern=patterns, subject=subjects)
def test_path_regex_agrees_with_the_concrete_matcher(pattern: str, subject: str) -> None:
    assert accepts(GLOBS.path(pattern or "**"), subject) is path_matches(pattern, subject)


@settings(max_examples=150, deadline=None)
@given(pattern=patterns, subject=subjects)
def test_binary_regex_agrees_with_the_concrete_matcher(pattern: str, subject: str) -> None:
    assert accepts(GLOBS.path(pattern), subject) is binary_matches(pattern, subject)


@settings(max_examples=100, deadline=None)
@given(pattern=patterns, subject=st.text(st.sampled_from("ab./*"), max_size=6))
def test_glob_regexes_agree_on_subjects_that_look_like_patterns(pattern: str, subject: str) -> None:
    assert accepts(GLOBS.host(pattern), subject) is host_matches(pattern, subject)
    assert accepts(GLOBS.path(pattern), subject) is binary_matches(pattern, subject)

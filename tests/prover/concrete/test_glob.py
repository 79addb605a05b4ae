"""Host, path and binary glob semantics of spec §9.2 (and §13 item 11)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.concrete.glob import binary_matches, host_matches, path_matches

# Spec §9.2 examples and the reference's runtime-parity host cases.
HOST_CASES = [
    ("api.example.com", "api.example.com", True),
    ("api.example.com", "other.example.com", False),
    ("api-internal.example.com", "api-internal.example.com", True),
    ("*.example.com", "api.example.com", True),
    ("*.example.com", "_service.example.com", True),
    ("*.example.com", ".example.com", True),
    ("*.example.com", "é.example.com", True),
    ("*.example.com", "$service.example.com", True),
    ("*.example.com", "-api.example.com", True),
    ("*.example.com", "a" * 242 + ".example.com", True),
    ("*.example.com", "deep.api.example.com", False),
    ("*.example.com", "example.com", False),
    ("**.example.com", "deep.api.example.com", True),
    ("**.example.com", "api..example.com", True),
    ("**.example.com", ".example.com", True),
    ("**.example.com", "example.com", False),
    ("api*.example.com", "api.example.com", True),
    ("api*.example.com", "api-v2.example.com", True),
    ("api*.example.com", "api_internal.example.com", True),
    ("api*.example.com", "api.v2.example.com", False),
    ("api*.example.com", "xapi.example.com", False),
    ("api.*.com", "api.x.com", True),
    ("api.*.com", "api..com", True),
    ("api.*.com", "api.x.y.com", False),
    ("api.**.com", "api.x.y.com", True),
    ("api.**", "api.", True),
    ("api.**", "api", False),
    ("**", "", True),
    ("**", "anything.at.all", True),
    ("***.example.com", "a.b.example.com", True),
    ("api.example.com", "api.example.com.", False),
    ("api.example.com", "api.example.co", False),
    ("api..com", "api..com", True),
    ("api..com", "api.com", False),
]


@pytest.mark.parametrize(("pattern", "host", "expected"), HOST_CASES)
def test_host_glob_matches_the_spec_examples(pattern: str, host: str, expected: bool) -> None:
    assert host_matches(pattern, host) is expected


@pytest.mark.parametrize(
    ("pattern", "host", "expected"),
    [
        ("api.example.com", "API.Example.COM", True),
        ("*.example.com", "API.EXAMPLE.COM", True),
        ("API.EXAMPLE.COM", "api.example.com", True),
        ("api.example.com", "APIX.EXAMPLE.COM", False),
    ],
)
def test_host_glob_is_case_insensitive_on_both_sides(
    pattern: str, host: str, expected: bool
) -> None:
    assert host_matches(pattern, host) is expected


PATH_PATTERNS = [
    "/a/**/b",
    "/**/b",
    "/a/**/**/b",
    "/a/**",
    "/a/**/**",
    "/a/**/",
    "/a/*/b",
    "/a/x**/b",
    "/a/**x/b",
    "/a/***/b",
    "/a/**/x*/**/b",
]
PATH_SUBJECTS = [
    "/a/b",
    "/a/x/b",
    "/a/x/y/b",
    "/b",
    "/a/",
    "/a",
    "/a/xb",
    "/a/x/z/xb/y/b",
    "/a/c",
    "/a/é/b",
    "/a/汉/b",
    "/a/e\u0301/b",
    "/a/😀/b",
]
# Worked out by hand from §9.2: every True below; every other pair is False.
PATH_TRUE = {
    "/a/**/b": {
        "/a/b", "/a/x/b", "/a/x/y/b", "/a/x/z/xb/y/b",
        "/a/é/b", "/a/汉/b", "/a/e\u0301/b", "/a/😀/b",
    },
    "/**/b": {
        "/a/b", "/a/x/b", "/a/x/y/b", "/b", "/a/x/z/xb/y/b",
        "/a/é/b", "/a/汉/b", "/a/e\u0301/b", "/a/😀/b",
    },
    "/a/**": {
        "/a/b", "/a/x/b", "/a/x/y/b", "/a/", "/a/xb", "/a/x/z/xb/y/b", "/a/c",
        "/a/é/b", "/a/汉/b", "/a/e\u0301/b", "/a/😀/b",
    },
    "/a/**/": {"/a/"},
    "/a/*/b": {"/a/x/b", "/a/é/b", "/a/汉/b", "/a/e\u0301/b", "/a/😀/b"},
    "/a/x**/b": {"/a/x/b"},
    "/a/**x/b": {"/a/x/b"},
    "/a/***/b": {"/a/x/b", "/a/é/b", "/a/汉/b", "/a/e\u0301/b", "/a/😀/b"},
    "/a/**/x*/**/b": {"/a/x/b", "/a/x/z/xb/y/b", "/a/x/y/b"},
}  # fmt: skip
PATH_TRUE["/a/**/**/b"] = PATH_TRUE["/a/**/b"]
PATH_TRUE["/a/**/**"] = PATH_TRUE["/a/**"]


@pytest.mark.parametrize("pattern", PATH_PATTERNS)
@pytest.mark.parametrize("path", PATH_SUBJECTS)
def test_path_glob_matches_the_runtime_parity_table(pattern: str, path: str) -> None:
    assert path_matches(pattern, path) is (path in PATH_TRUE[pattern])


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("/a/**", "/a", False),
        ("/a/**", "/a/x/y", True),
        ("/**", "/", True),
        ("/**", "/any/path/at/all", True),
        ("**", "no-leading-slash", True),
        ("", "/anything", True),
        ("", "", True),
        ("/items/*", "/items/é", True),
        ("/items/*", "/items/", True),
        ("/items/*", "/items/a/b", False),
        ("/items/*.json", "/items/x.json", True),
        ("/items/*.json", "/items/x/y.json", False),
        ("/Items", "/items", False),
        ("/v1/**/", "/v1/a/", True),
        ("/v1/**/", "/v1/a", False),
        ("**/b", "b", True),
        ("**/b", "x/y/b", True),
        ("/a/**/b", "/a//b", True),
        ("/a/b", "/a/b/", False),
        ("/", "/", True),
        ("/", "/a", False),
        ("/a//b", "/a//b", True),
        ("/a//b", "/a/b", False),
        ("/a/*/b", "/a//b", True),
    ],
)
def test_path_glob_edge_cases(pattern: str, path: str, expected: bool) -> None:
    assert path_matches(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "binary", "expected"),
    [
        ("/usr/bin/curl", "/usr/bin/curl", True),
        ("/usr/bin/curl", "/usr/bin/curl2", False),
        ("/usr/bin/*", "/usr/bin/curl", True),
        ("/usr/bin/*", "/usr/bin/sub/curl", False),
        ("/usr/**", "/usr/bin/sub/curl", True),
        ("/usr/**/python3", "/usr/python3", True),
        ("/usr/**/python3", "/usr/local/bin/python3", True),
        ("/usr/bin/py*", "/usr/bin/python3.12", True),
        ("/**", "/usr/bin/curl", True),
        ("/usr/bin/CURL", "/usr/bin/curl", False),
        ("", "", True),
        ("", "/usr/bin/curl", False),
    ],
)
def test_binary_glob_uses_path_semantics(pattern: str, binary: str, expected: bool) -> None:
    assert binary_matches(pattern, binary) is expected


# ---------------------------------------------------------------------------------------
# An independent oracle: the spec's compiled regular expressions, built with `re`.


def _host_regex(pattern: str) -> re.Pattern[str]:
    if pattern == "**":
        return re.compile(".*", re.DOTALL)
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^.]*")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out), re.DOTALL)


def _path_regex(pattern: str) -> re.Pattern[str]:
    if pattern in ("**", ""):
        return re.compile(".*", re.DOTALL)
    segments = pattern.split("/")
    out, index = [], 0
    while index < len(segments):
        if segments[index] == "**":
            while index + 1 < len(segments) and segments[index + 1] == "**":
                index += 1
            out.append("(?:|.*/)" if index + 1 < len(segments) else ".*")
        else:
            out.extend("[^/]*" if c == "*" else re.escape(c) for c in segments[index])
            if index + 1 < len(segments):
                out.append("/")
        index += 1
    return re.compile("".join(out), re.DOTALL)


_HOST_ALPHABET = st.sampled_from(["a", "b", ".", "*", "**"])
_PATH_ALPHABET = st.sampled_from(["a", "b", "/", "*", "**", "/**/", "."])
_SUBJECT_CHARS = st.text(alphabet="ab./é", max_size=10)


@settings(max_examples=400, deadline=None)
@given(st.lists(_HOST_ALPHABET, max_size=8).map("".join), _SUBJECT_CHARS)
def test_host_matcher_agrees_with_a_regex_translation(pattern: str, host: str) -> None:
    assert host_matches(pattern, host) is bool(_host_regex(pattern).fullmatch(host))


@settings(max_examples=400, deadline=None)
@given(st.lists(_PATH_ALPHABET, max_size=8).map("".join), _SUBJECT_CHARS)
def test_path_matcher_agrees_with_a_regex_translation(pattern: str, path: str) -> None:
    assert path_matches(pattern, path) is bool(_path_regex(pattern).fullmatch(path))


def test_long_inputs_match_quickly() -> None:
    pattern = "/" + "/".join(["**", "*a*"] * 40)
    path = "/" + "/".join(["xax"] * 1000)
    assert path_matches(pattern, path)
    assert not path_matches(pattern, path + "/b")
    assert host_matches("*" * 200 + ".com", "a" * 4000 + ".com")

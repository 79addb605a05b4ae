"""Canonical witness forms (spec §9.8 step 3) and the action domain (spec §9.1)."""

from __future__ import annotations

import pytest

from prover.concrete.canonical import (
    is_action_domain_binary,
    is_action_domain_path,
    is_canonical_binary,
    is_canonical_host,
    is_canonical_rest_path,
    is_http_token,
)

MAX_HOST = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        *[(h, True) for h in ("api.example.com", "a", "_service.example.com", "a-b.c_d.e1")],
        *[(h, True) for h in ("x" * 63 + ".com", MAX_HOST, "1.2.3.4")],
        *[(h, False) for h in ("", "API.example.com", ".example.com", "api..example.com")],
        *[(h, False) for h in ("example.com.", "-api.example.com", "api-.example.com")],
        *[(h, False) for h in ("x" * 64 + ".com", MAX_HOST + "d", "é.example.com")],
        *[(h, False) for h in ("$service.example.com", "a b.com", "a*.com", "h:443")],
    ],
)
def test_canonical_host(host: str, expected: bool) -> None:
    assert is_canonical_host(host) is expected


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        *[(m, True) for m in ("GET", "get", "M-SEARCH", "X" * 65, "!#$%&'*+-.^_`|~", "0")],
        *[(m, False) for m in ("", "GET ", "G(T", "G,T", "G/T", "GÉT", "G\x00T", "G:T")],
    ],
)
def test_http_token(method: str, expected: bool) -> None:
    assert is_http_token(method) is expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        *[(p, True) for p in ("/", "/a/b", "/a/", "/v1/items/7", "/a.b/c..d", "/...")],
        *[(p, True) for p in ("/-._~!$&'()*+,=:@", "/%C3%A9", "/%25", "/%3F", "/%20")],
        *[(p, True) for p in ("/a" * 2048,)],
        *[(p, False) for p in ("", "a/b", "//", "/a//b", "/a;b", "/a?b", "/a#b", "/.")],
        *[(p, False) for p in ("/..", "/a/./b", "/a/../b", "/a/.", "/a b", "/é", "/a\tb")],
        *[(p, False) for p in ('/a"b', "/a<b", "/a[b", "/a{b", "/a|b", "/a^b", "/a`b")],
        *[(p, False) for p in ("/a\\b", "/%c3%a9", "/%C3%a9", "/%2F", "/%2f", "/%3B")],
        *[(p, False) for p in ("/%00", "/%1F", "/%7F", "/%41", "/%7E", "/%2D", "/%", "/%4")],
        *[(p, False) for p in ("/%G0", "/%3A", "/%40", "/a" * 2048 + "b")],
    ],
)
def test_canonical_rest_path(path: str, expected: bool) -> None:
    assert is_canonical_rest_path(path) is expected


@pytest.mark.parametrize(
    ("binary", "expected"),
    [
        *[(b, True) for b in ("/usr/bin/curl", "/", "/usr/bin/é", "/a b", "/a" * 2048)],
        *[(b, False) for b in ("", "usr/bin/curl", "/usr//bin", "/usr/./bin", "/usr/..")],
        *[(b, False) for b in ("/usr/bin/\x00", "/a\nb", "/a\x7fb", "/a\x85b", "/é" * 1400)],
    ],
)
def test_canonical_binary(binary: str, expected: bool) -> None:
    assert is_canonical_binary(binary) is expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        *[(p, True) for p in ("/", "/a/b", "/a b", "/é", "/a.", "/.a", "/a/..b", "/%2F")],
        *[(p, True) for p in ("/é" * 2048,)],
        *[(p, False) for p in ("", "a", "//", "/a//b", "/./a", "/a/../b", "/a;b", "/a?b")],
        *[(p, False) for p in ("/a#b", "/.", "/..", "/a/.", "/a/..", "/" + "a" * 4096)],
    ],
)
def test_action_domain_path(path: str, expected: bool) -> None:
    assert is_action_domain_path(path) is expected


@pytest.mark.parametrize(
    ("binary", "expected"),
    [
        *[(b, True) for b in ("/usr/bin/curl", "/", "//x/../y", "/" + "a" * 4095)],
        *[(b, False) for b in ("", "x", "/" + "a" * 4096)],
    ],
)
def test_action_domain_binary(binary: str, expected: bool) -> None:
    assert is_action_domain_binary(binary) is expected

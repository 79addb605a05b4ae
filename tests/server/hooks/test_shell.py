"""Splitting command lines: operators, quoting, directories, wrappers, what gets written."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.hooks import words
from server.hooks.shell import ShellSyntaxError, scan, split_commands

ENV = {"HOME": "/home/u", "PROJECT": "/srv/p"}


def _argvs(text: str, cwd: str | None = "/w") -> list[tuple[list[str], str | None]]:
    return [(c.argv, c.cwd) for c in split_commands(text, cwd, ENV)]


def test_operators_split_commands_and_quotes_keep_them_together() -> None:
    assert _argvs("a 'x;y' && b \"p q\" || c;d | e & f\ng") == [
        (["a", "x;y"], "/w"),
        (["b", "p q"], "/w"),
        (["c"], "/w"),
        (["d"], "/w"),
        (["e"], "/w"),
        (["f"], "/w"),
        (["g"], "/w"),
    ]


def test_cd_moves_the_following_commands_and_a_subshell_restores_it(tmp_path: Path) -> None:
    for sub in ("w/sub", "abs", "home/q"):
        (tmp_path / sub).mkdir(parents=True)
    t = str(tmp_path)
    env = {"HOME": f"{t}/home"}
    text = f"cd sub && x; (cd {t}/abs; y) ; z; cd; h; cd ~/q && k"
    assert [(c.argv, c.cwd) for c in split_commands(text, f"{t}/w", env)] == [
        (["cd", "sub"], f"{t}/w"),
        (["x"], f"{t}/w/sub"),
        (["cd", f"{t}/abs"], f"{t}/w/sub"),
        (["y"], f"{t}/abs"),
        (["z"], f"{t}/w/sub"),
        (["cd"], f"{t}/w/sub"),
        (["h"], f"{t}/home"),
        (["cd", "~/q"], f"{t}/home"),
        (["k"], f"{t}/home/q"),
    ]


def test_a_directory_the_line_cannot_know_is_none(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    t = str(tmp_path)
    text = f"cd - && a; cd $(pwd)/x && b; pushd {t}/t && c; popd; d; cd nowhere; e"
    names = {"a", "b", "c", "d", "e"}
    named = [(c.argv, c.cwd) for c in split_commands(text, t, ENV) if c.argv[0] in names]
    assert named == [
        (["a"], None),
        (["b"], None),
        (["c"], f"{t}/t"),
        (["d"], None),  # popd returns to the unknown directory pushd left
        (["e"], None),
    ]
    text = f"pushd {t}/t && c; popd; d"
    assert [c.cwd for c in split_commands(text, t, ENV)] == [t, f"{t}/t", f"{t}/t", t]


def test_redirections_are_not_arguments_and_written_files_are_recorded() -> None:
    commands = split_commands(
        "gen 2>/dev/null > out.yaml && tee -a t.yaml < in && cp a b/ && x", "/w", ENV
    )
    assert [c.argv for c in commands] == [
        ["gen"],
        ["tee", "-a", "t.yaml"],
        ["cp", "a", "b/"],
        ["x"],
    ]
    assert {"/dev/null", "/w/out.yaml"} <= commands[1].written_before.paths()
    assert "/w/t.yaml" in commands[1].written_before.paths() | {"/w/t.yaml"}
    assert {"/w/t.yaml", "/w/b", "/w/b/"} <= commands[3].written_before.paths()
    assert "/w/t.yaml" not in commands[1].written_before
    assert _argvs("a >&2 && b 2>&1")[0] == (["a"], "/w")


def test_here_document_bodies_and_comments_are_skipped() -> None:
    text = "cat > p.yaml <<-EOF # a comment\n\tit's: 'open\n\tEOF\nnext --flag # tail\n"
    assert [c.argv for c in split_commands(text, "/w", ENV)] == [["cat"], ["next", "--flag"]]


def test_assignments_wrappers_and_nested_shells() -> None:
    commands = split_commands(
        "A=1 B='two words' env -u A C=3 sudo -E nice -n 5 tool x; "
        "bash -lc 'cd d && inner y'; eval 'ev z'; export V=$PROJECT/v",
        "/w",
        ENV,
    )
    tool = commands[0]
    assert tool.args == ["tool", "x"]
    assert tool.assignments == {"B": "two words", "C": "3"}
    assert tool.environment["C"] == "3" and "A" not in tool.environment
    assert [c.args for c in commands[1:]] == [
        ["bash", "-lc", "cd d && inner y"],
        ["cd", "d"],
        ["inner", "y"],
        ["eval", "ev z"],
        ["ev", "z"],
        ["export", "V=/srv/p/v"],
    ]
    assert commands[3].cwd is None  # /w/d does not exist: cd fails or the line makes it


def test_substitutions_are_kept_raw_and_marked_dynamic() -> None:
    *inner, command = split_commands("x $(a 'b c') \"q $(d)\" `e` <(f) plain", "/w", ENV)
    assert [c.args for c in inner] == [["a", "b c"], ["d"], ["e"], ["f"]]
    assert command.args == ["x", None, None, None, None, "plain"]
    assert [(w.raw, w.dynamic) for w in command.words] == [
        ("x", False),
        ("$(a 'b c')", True),
        ('"q $(d)"', True),
        ("`e`", True),
        ("<(f)", True),
        ("plain", False),
    ]


@pytest.mark.parametrize("text", ["a 'b", 'a "b', "a $(b", "a `b", "a (b", "a ) b"])
def test_unterminated_syntax_is_an_error(text: str) -> None:
    with pytest.raises(ShellSyntaxError):
        split_commands(text, "/w", ENV)


def _expand(raw: str, cwd: str | None = "/w") -> list[str] | None:
    return words.expand(words.segments(raw), words.Lookup(dict(ENV), None, cwd))


def test_variables_expand_or_say_they_cannot() -> None:
    assert _expand("$HOME/${PROJECT}/x") == ["/home/u//srv/p/x"]
    assert _expand("~/x") == ["/home/u/x"]
    assert _expand("'~/x'") == ["~/x"]
    assert _expand("$MISSING/x") is None
    assert _expand("$(cmd)") is None
    assert _expand("${HOME:-/x}") is None
    assert _expand("$'\\x6fpen'") is None
    assert _expand("{a,b}.yaml") is None
    assert _expand("--policy=~/p.yaml") is None  # bash expands this ~, other shells do not


def test_scan_marks_operators() -> None:
    assert [kind for kind, _ in scan("a|b")] == ["word", "op", "word"]


def test_globs_expand_to_one_file_or_are_unknown(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    for name in ("bad.yaml", "[b]ad.yaml", "a.yaml", ".hidden.yaml"):
        (tmp_path / "p" / name).write_text("")
    t = str(tmp_path)
    assert _expand("p/[b]ad.yaml", t) == ["p/bad.yaml"]  # as bash expands it, not the decoy
    assert _expand("'p/[b]ad.yaml'", t) == ["p/[b]ad.yaml"]  # quoted: no expansion
    assert _expand("p/b*", t) == ["p/bad.yaml"]
    assert _expand("p/*.yaml", t) is None  # several matches: their order is the locale's
    assert _expand("p/*hidden.yaml", t) is None  # matches only with dotglob
    assert _expand("p/nothing*", t) is None  # no match: kept, removed or an error
    assert _expand("/*/*/*/x*", t) is None  # too many wildcard levels to walk

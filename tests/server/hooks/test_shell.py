"""Splitting command lines: operators, quoting, directories, wrappers, what gets written."""

from __future__ import annotations

import pytest

from server.hooks.shell import ShellSyntaxError, expand, scan, split_commands

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


def test_cd_moves_the_following_commands_and_a_subshell_restores_it() -> None:
    assert _argvs("cd sub && x; (cd /abs; y) ; z; cd; h; cd ~/q && k") == [
        (["cd", "sub"], "/w"),
        (["x"], "/w/sub"),
        (["cd", "/abs"], "/w/sub"),
        (["y"], "/abs"),
        (["z"], "/w/sub"),
        (["cd"], "/w/sub"),
        (["h"], "/home/u"),
        (["cd", "~/q"], "/home/u"),
        (["k"], "/home/u/q"),
    ]


def test_a_directory_the_line_cannot_know_is_none() -> None:
    assert _argvs("cd - && a; cd $(pwd)/x && b; pushd /t && c; popd; d")[1::2] == [
        (["a"], None),
        (["b"], None),
        (["c"], "/t"),
        (["d"], None),
    ]


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
    assert commands[1].written_before == {"/dev/null", "/w/out.yaml"}
    assert {"/w/t.yaml", "/w/b", "/w/b/"} <= commands[3].written_before
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
    assert tool.argv == ["tool", "x"]
    assert tool.assignments == {"B": "two words", "C": "3"}
    assert [c.argv for c in commands[1:]] == [
        ["bash", "-lc", "cd d && inner y"],
        ["cd", "d"],
        ["inner", "y"],
        ["eval", "ev z"],
        ["ev", "z"],
        ["export", "V=$PROJECT/v"],
    ]
    assert commands[3].cwd == "/w/d"


def test_substitutions_are_kept_raw_and_marked_dynamic() -> None:
    (command,) = split_commands("x $(a 'b c') \"q $(d)\" `e` <(f) plain", "/w", ENV)
    assert [(w.value, w.dynamic) for w in command.words] == [
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


def test_variables_expand_or_say_they_cannot() -> None:
    assert expand("$HOME/${PROJECT}/x", ENV) == "/home/u//srv/p/x"
    assert expand("~/x", ENV) == "/home/u/x"
    assert expand("$MISSING/x", ENV) is None
    assert expand("$(cmd)", ENV) is None


def test_scan_marks_operators() -> None:
    assert [kind for kind, _ in scan("a|b")] == ["word", "op", "word"]

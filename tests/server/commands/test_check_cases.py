"""Every acceptance case of ``tests/data/boundary_cases.yaml`` through ``check --output json``.

All cases run in this one process through ``main([...])``. Each must give the expected
result and reason code with the matching exit code; an ``exceeds_boundary`` counterexample
read back from the JSON must replay through the concrete evaluator (allowed by the
candidate, refused by the boundary), so the JSON carries the witness faithfully.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from prover.concrete.witness import replays
from prover.policy.loader import load_policy
from prover.policy.normalize import normalize
from prover.results import Counterexample
from server.cli import main
from tests.support import DISPUTED, boundary_cases

COUNTEREXAMPLE: TypeAdapter[Any] = TypeAdapter(Counterexample)


def _params() -> list[Any]:
    params = []
    for case in boundary_cases():
        marks = []
        if case["id"] in DISPUTED:
            marks.append(pytest.mark.xfail(strict=True, reason=DISPUTED[case["id"]]))
        params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


@pytest.mark.parametrize("case", _params())
def test_boundary_case_through_the_cli_json_output(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = tmp_path / "candidate.yaml"
    boundary = tmp_path / "boundary.yaml"
    candidate.write_text(case["candidate"], encoding="utf-8")
    boundary.write_text(case["boundary"], encoding="utf-8")

    code = main(
        [
            "check",
            str(candidate),
            "--boundary",
            str(boundary),
            "--output",
            "json",
            "--reference-semantics",
        ]
    )
    captured = capsys.readouterr()
    document = json.loads(captured.out)

    expect = case["expect"]
    assert document["result"] == expect["result"], document["reason"]
    if "reason_code" in expect:
        assert document["reason_code"] == expect["reason_code"]
    assert code == document["exit_code"]
    assert captured.err == ""
    assert document["inputs"] == {"candidate": str(candidate), "boundary": str(boundary)}
    if document["result"] == "exceeds_boundary":
        assert document["reason_code"] is None and document["reason"] is None
        witness = COUNTEREXAMPLE.validate_python(document["counterexample"])
        assert replays(
            normalize(load_policy(case["candidate"])),
            normalize(load_policy(case["boundary"])),
            witness,
        )
    else:
        assert document["counterexample"] is None

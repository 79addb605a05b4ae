"""The text report and the CLI exit status of an assessment."""

from __future__ import annotations

from prover.proposal import exit_code, render_text
from tests.prover.proposal.helpers import assess, endpoint, rest, rule


def test_report_shows_summary_panels_and_review_verdict() -> None:
    current = {"gh": rule([rest("api.github.com", 443, "POST")], "/usr/bin/gh")}
    assessment = assess(current, "gh", rule([rest("api.github.com", 443, "DELETE")], "/usr/bin/gh"))
    text = render_text(assessment)
    assert "capability expansion on credentialed host  1 path(s)" in text
    assert "--- Finding #1 [capability expansion on credentialed host] ---" in text
    assert (
        "  Binary: /usr/bin/gh\n    Endpoints: api.github.com:443\n    Methods:   DELETE\n" in text
    )
    assert "  Remediation:\n    - " in text
    assert (
        "  prover: 1 new finding\n"
        "    capability_expansion: DELETE on api.github.com:443 via /usr/bin/gh" in text
    )
    assert text.endswith("REVIEW — prover findings require human attention.\n")
    assert exit_code(assessment) == 1


def test_clean_report_passes_with_exit_0() -> None:
    assessment = assess(None, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"))
    text = render_text(assessment)
    assert "No new tracked-risk findings" in text
    assert text.endswith("PASS — nothing new needs review.\n")
    assert exit_code(assessment) == 0


def test_notes_only_report_asks_for_review() -> None:
    assessment = assess(None, "db", rule([endpoint("db.example.com", 5432)], "/usr/bin/psql"))
    text = render_text(assessment)
    assert "Security notes:\n  - Port 5432 is a well-known database/service port.\n" in text
    assert text.endswith("REVIEW — security notes or approval blockers require human attention.\n")
    assert exit_code(assessment) == 1


def test_accepted_findings_report_pass_with_count() -> None:
    assessment = assess(
        None,
        "r",
        rule([endpoint("api.github.com")], "/usr/bin/curl"),
        accepted_risks="[{query: credential_reach_expansion, reason: release uploads}]",
    )
    text = render_text(assessment)
    assert "--- Accepted Findings ---" in text and "Reason: release uploads" in text
    assert text.endswith("PASS — All findings accepted. (1 accepted)\n")
    assert exit_code(assessment) == 0


def test_application_error_report_and_exit_2() -> None:
    assessment = assess(None, "r", rule([{"host": "*.com", "port": 443}], "/usr/bin/curl"))
    text = render_text(assessment)
    assert "Application error: candidate invalid:" in text
    assert text.endswith("ERROR — the proposal cannot be applied to the current policy.\n")
    assert exit_code(assessment) == 2

"""Issue 41, point 6 (its L4-L7 parts): the low findings of security review 2 about what the product writes and
says, replayed as the review ran them: a control character in a third party's name (L4), a planted symbolic link
in a shared `--out` (L5), `status --json` and `sync` with the catalog unreachable (L6), and the receiver's token on
a documented command line (L7). Each asserts the answer now and that nothing was lost.
"""

from __future__ import annotations

import io
import json
import re
import stat
from datetime import date
from pathlib import Path

import duckdb
import pytest
from openpyxl import load_workbook

from invoicing_warehouse.cli import main

ROOT = Path(__file__).resolve().parents[2]
AS_OF = date(2026, 1, 31)


def _export(warehouse: Path, out: Path, file_format: str) -> int:
    return main(["export", "--warehouse", str(warehouse), "--as-of", AS_OF.isoformat(), "--format", file_format,
                 "--out", str(out)])


# ------------------------------------------------------------------------------------ L4: control characters


def test_l4_a_name_ending_in_a_vertical_tab_exports_to_xlsx_with_the_character_shown(published_fixture, tmp_path):
    # review 2, L4: `export --format xlsx` exited 2 with openpyxl's IllegalCharacterError
    def control_characters(conn: duckdb.DuckDBPyConnection) -> None:
        conn.execute("update invoicing_raw.customers set name = name || chr(11) || chr(0) || 'x' where id = 'c1'")

    warehouse = published_fixture(AS_OF, control_characters)
    out = tmp_path / "out"
    assert _export(warehouse, out, "xlsx") == 0
    sheet = load_workbook(io.BytesIO((out / f"marts_{AS_OF.isoformat()}.xlsx").read_bytes()))["receivables"]
    header = [cell.value for cell in sheet[1]]
    # xlsx is made for people: a portal in euros gets the French labels (issue 42 point 7), "Client" for the name
    names = {row[header.index("Client")] for row in sheet.iter_rows(min_row=2, values_only=True)}
    assert "Alpha\ufffd\ufffdx" in names  # each refused character visible where it was, nothing else changed
    assert _export(warehouse, tmp_path / "csv", "csv") == 0  # csv keeps the exact text, as before
    assert "Alpha\x0b\x00x" in (tmp_path / "csv" / "receivables.csv").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------- L5: a planted symlink


def test_l5_a_symlink_planted_in_out_is_replaced_never_written_through(published_fixture, tmp_path):
    # review 2, L5: `ln -s precious.txt OUT/receivables.csv; export --out OUT` wrote the CSV into precious.txt
    warehouse = published_fixture(AS_OF)
    precious = tmp_path / "precious.txt"
    precious.write_text("the attacker's target\n")
    precious.chmod(0o644)
    out = tmp_path / "out"
    out.mkdir(mode=0o700)
    (out / "receivables.csv").symlink_to(precious)
    assert _export(warehouse, out, "csv") == 0
    assert precious.read_text() == "the attacker's target\n"
    written = out / "receivables.csv"
    assert not written.is_symlink() and written.read_text(encoding="utf-8").startswith("as_of_date,invoice_id,")
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert not [p.name for p in out.iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770])
def test_l5_an_out_folder_others_may_write_is_refused_and_nothing_written(published_fixture, tmp_path, capsys,
                                                                        mode):
    warehouse = published_fixture(AS_OF)
    out = tmp_path / "shared"
    out.mkdir()
    out.chmod(mode)
    assert _export(warehouse, out, "csv") == 1
    assert "is writable by other users" in capsys.readouterr().err
    assert list(out.iterdir()) == []


# --------------------------------------------------------------------------- L6: the catalog unreachable


@pytest.fixture()
def wrong_password_lake(lake, monkeypatch):
    from invoicing_warehouse.engine.target import CATALOG_ENV, DATA_PATH_ENV, ENGINE_ENV, PASSWORD_ENV

    for name, value in ((ENGINE_ENV, "ducklake"), (CATALOG_ENV, lake.catalog.public()),
                        (DATA_PATH_ENV, str(lake.data_path)), (PASSWORD_ENV, "wrong-password-DO-NOT-PRINT")):
        monkeypatch.setenv(name, value)
    return lake


def test_l6_status_json_answers_an_error_field_and_exit_1_when_the_catalog_is_unreachable(wrong_password_lake,
                                                                                          capsys):
    # review 2, L6: a psycopg2 traceback and exit 2 ("bad usage")
    assert main(["status", "--json"]) == 1
    out, err = capsys.readouterr()
    answer = json.loads(out)
    assert answer["ok"] is False and "unreachable" in answer["error"]
    assert "Traceback" not in out + err and "DO-NOT-PRINT" not in out + err


def test_l6_sync_with_the_catalog_unreachable_fails_with_a_clear_message(wrong_password_lake, capsys, monkeypatch,
                                                                         tmp_path):
    # nothing listens on port 9: the catalog is the first thing that fails, as in the review
    for name, value in (("SOURCES__INVOICING__BASE_URL", "http://127.0.0.1:9/api/v2"),
                        ("SOURCES__INVOICING__CLIENT_ID", "id"), ("SOURCES__INVOICING__CLIENT_SECRET", "secret")):
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    code = main(["sync"])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "unexpectedly" not in err and "Traceback" not in err and "DO-NOT-PRINT" not in out + err
    assert "unreachable" in err


# ----------------------------------------------------------------------------- L7: the token on a command line


def test_l7_no_doc_puts_the_webhook_token_on_a_command_line():
    # review 2, L7: `webhooks register --url "https://hooks.example.com/hooks/$INVOICING_WEBHOOK_TOKEN"` showed the
    # whole token in `ps -eo args`
    token = r"(\$\{?INVOICING_WEBHOOK_TOKEN|/hooks/[A-Za-z0-9_-]{16,})"
    # an argument may wrap onto the next line of a paragraph: the pattern spans whitespace, newlines included
    on_command_line = re.compile(rf"(--url\s+[\"']?\S*{token}|curl\b[^\n`]*{token})")
    offending = [f"{doc.relative_to(ROOT)}: {match.group(0)}"
                 for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
                 for match in on_command_line.finditer(doc.read_text(encoding="utf-8"))]
    assert offending == []
    receiver_doc = (ROOT / "docs" / "webhook-receiver.md").read_text(encoding="utf-8")
    assert "webhooks register --receiver" in receiver_doc

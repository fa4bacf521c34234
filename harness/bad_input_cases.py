"""Bad input for `invoicing-warehouse sync`, each case with the behaviour a user would want.

Two kinds of wanted behaviour:
- refuse: non-zero exit, one clear message naming what failed (endpoint, status or the API's own
  text), no Python traceback, no secret in the output, and the warehouse untouched (the DuckDB
  file's tables and dlt's state, in the file and in the local pipeline dir, identical before/after);
- absorb: exit 0, a warning at most, and a correct load (every raw table equals the sandbox's
  ground truth, old rows unchanged, new columns appear).

Every case starts from a copy of one "golden" workspace (a successful first sync), so "untouched"
and "old rows unchanged" compare with a real, loaded warehouse. Served by: the sandbox itself
(credentials, scope, wrong path), a closed port on 127.0.0.1 (unreachable), or the tamper proxy of
`harness/tamper_proxy.py` in front of the sandbox (the malformed answers).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import duckdb

from harness.api_writer import ApiWriter
from harness.common import free_port
from harness.sync_process import SyncResult, Workspace, run_sync_in_process
from harness.tamper_proxy import Exchange, TamperProxy
from harness.warehouse_state import differences, pipeline_dir_fingerprint, warehouse_fingerprint
from harness.warehouse_truth import compare_raw_tables
from pipelines.invoicing.http.token_cache import forget_kept_tokens

# Moves the sandbox clock past the records a case changed, so that the next frozen window
# (which ends "a few seconds" before server time) holds them without the test sleeping.
CLOCK_STEP_S = 30.0
CASE_TITLES = (
    "wrong client secret",
    "client not allowed the read scope",
    "unreachable base URL (closed port)",
    "wrong base URL (path answers 404)",
    "answers that are not JSON (HTML page, status 200)",
    "unknown extra field on a page (customers.loyaltyTier)",
    "amount arrives as a string in one record",
    "record without lastUpdate (items)",
    "404 for a supplier document listed a moment ago (its events)",
)


@dataclass
class CaseResult:
    """One row of the printed table."""

    case: str
    served_by: str
    behaviour: str
    passed: bool
    problems: list[str] = field(default_factory=list)


def format_table(results: list[CaseResult]) -> str:
    """The table `input | served by | behaviour | pass`, then the problems of failed cases."""
    width = max(len(r.case) for r in results)
    lines = [f"{'input':<{width}} | {'served by':<12} | {'pass':<4} | behaviour", "-" * (width + 80)]
    for r in results:
        lines.append(
            f"{r.case:<{width}} | {r.served_by:<12} | {'yes' if r.passed else 'NO':<4} | {r.behaviour}"
        )
    for r in results:
        for problem in r.problems:
            lines.append(f"  {r.case}: {problem}")
    return "\n".join(lines)



class BadInputSuite:
    """Runs every case against one sandbox (`sb`, a running SandboxServer) under `root`."""

    def __init__(
        self,
        sb,
        root: Path,
        client_secret: str,
        runner: Callable[..., SyncResult] = run_sync_in_process,
        sync_args: tuple[str, ...] = (),
    ) -> None:
        self.sb = sb
        self.runner = runner  # in this process by default; harness/sync_process.run_sync_command: a process
        # extra arguments of every sync, e.g. `("--rate-limit", "0")` against a sandbox whose own limit is off
        self.sync_args = tuple(sync_args)
        self.root = Path(root)
        self.secret = client_secret
        self.golden = Workspace(self.root / "golden")
        self.results: list[CaseResult] = []

    # ---- plumbing -------------------------------------------------------------------------
    def run(self, workspace: Workspace, env: dict) -> SyncResult:
        """One `invoicing-warehouse sync` of `workspace` with `env` (plus the suite's `sync_args`)."""
        return self.runner(workspace, env, *self.sync_args)

    def env(self, workspace: Workspace, base_url: str | None = None, secret: str | None = None) -> dict:
        return workspace.env(base_url or self.sb.base_url, self.sb.client_id, secret or self.secret)

    def prepare(self) -> SyncResult:
        """The golden first sync every case starts from."""
        result = self.run(self.golden, self.env(self.golden))
        if result.returncode != 0:
            raise AssertionError(f"golden sync failed ({result.returncode}):\n{result.output[-3000:]}")
        return result

    def clone(self, name: str) -> Workspace:
        workspace = Workspace(self.root / name)
        shutil.copytree(self.golden.root, workspace.root)
        return workspace

    def fingerprint(self, workspace: Workspace) -> dict[str, str]:
        prints = {f"db:{k}": v for k, v in warehouse_fingerprint(workspace.warehouse).items()}
        # dlt's pipeline working dirs, wherever the pipeline puts them (beside the warehouse, or
        # under DLT_DATA_DIR): every directory holding a state.json.
        for state_file in sorted(workspace.root.rglob("state.json")):
            pipeline_dir = state_file.parent
            for key, value in pipeline_dir_fingerprint(pipeline_dir).items():
                prints[f"dlt:{pipeline_dir.relative_to(workspace.root)}/{key}"] = value
        return prints

    def advance_clock(self) -> None:
        self.sb.config.clock_offset_s = float(self.sb.config.clock_offset_s or 0) + CLOCK_STEP_S

    def writer(self) -> ApiWriter:
        return ApiWriter(self.sb.base_url, self.sb.client_id, self.sb.client_secret)

    def truth_mismatches(
        self, workspace: Workspace, ignore: Callable[[str], bool] = lambda line: False
    ) -> list[str]:
        """Differences between the workspace's warehouse and the sandbox, minus those `ignore` accepts."""
        comparison = compare_raw_tables(workspace.warehouse, self.sb.portal)
        return [line for line in comparison.mismatches if not ignore(line)]

    # ---- the two wanted behaviours ------------------------------------------------------------
    def refuse(
        self, case: str, served_by: str, workspace: Workspace, env: dict, must_mention: list[tuple[str, ...]]
    ) -> CaseResult:
        """Runs a sync that must be refused: non-zero exit, clear message, warehouse untouched."""
        before = self.fingerprint(workspace)
        result = self.run(workspace, env)
        after = self.fingerprint(workspace)
        problems = []
        if result.returncode == 0:
            problems.append("exit code 0")
        output = result.output
        for alternatives in must_mention:
            if not any(word.lower() in output.lower() for word in alternatives):
                problems.append(f"message mentions none of {alternatives}")
        if "Traceback (most recent call last)" in output:
            problems.append("prints a Python traceback instead of a message")
        if self.secret in output or env["SOURCES__INVOICING__CLIENT_SECRET"] in output:
            problems.append("the client secret appears in the output")
        problems += [f"changed: {d}" for d in differences(before, after)]
        message = _last_meaningful_line(output)
        behaviour = f"exit {result.returncode} in {result.seconds:.1f}s: {message}"
        return CaseResult(case, served_by, behaviour, not problems, problems)

    # ---- the cases ------------------------------------------------------------------------------
    def run_all(self) -> list[CaseResult]:
        """Runs every case in order and returns the table rows."""
        self.prepare()
        for case in (
            self.wrong_client_secret,
            self.scope_without_read,
            self.unreachable_base_url,
            self.wrong_base_url,
            self.response_not_json,
            self.unknown_extra_field,
            self.field_type_changes,
            self.record_without_last_update,
            self.record_vanished_after_listing,
        ):
            try:
                self.results.append(case())
            except Exception as error:  # a broken case is a failed row, the others still run  # noqa: BLE001
                title = CASE_TITLES[len(self.results)]
                self.results.append(
                    CaseResult(title, "?", f"case crashed: {error!r}"[:300], False, [repr(error)])
                )
        return self.results

    def wrong_client_secret(self) -> CaseResult:
        workspace = self.clone("wrong_secret")
        env = self.env(workspace, secret="WRONG-S3CRET-canary-0b1d")
        return self.refuse(
            "wrong client secret",
            "sandbox",
            workspace,
            env,
            [("401", "invalid_client", "authentication failed", "credentials")],
        )

    def scope_without_read(self) -> CaseResult:
        workspace = self.clone("scope")
        previous = self.sb.config.allowed_scopes
        forget_kept_tokens()  # the service honours a token it issued: the refusal comes with a token request
        self.sb.config.allowed_scopes = ("write",)
        try:
            return self.refuse(
                "client not allowed the read scope", "sandbox", workspace, self.env(workspace), [("scope",)]
            )
        finally:
            self.sb.config.allowed_scopes = previous

    def unreachable_base_url(self) -> CaseResult:
        workspace = self.clone("unreachable")
        port = free_port()  # bound, then released: nothing listens on it
        env = self.env(workspace, base_url=f"http://127.0.0.1:{port}/api/v2")
        return self.refuse(
            "unreachable base URL (closed port)",
            "closed port",
            workspace,
            env,
            [(f"127.0.0.1:{port}", "unreachable", "connect")],
        )

    def wrong_base_url(self) -> CaseResult:
        workspace = self.clone("wrong_url")
        env = self.env(workspace, base_url=self.sb.base_url.replace("/api/v2", "/api/v9"))
        return self.refuse(
            "wrong base URL (path answers 404)", "sandbox", workspace, env, [("404", "not found")]
        )

    def response_not_json(self) -> CaseResult:
        workspace = self.clone("not_json")
        html = b"<html><body><h1>Maintenance</h1>We'll be back soon.</body></html>"

        def tamper(exchange: Exchange) -> None:
            if exchange.method == "GET":
                exchange.body = html
                exchange.headers = {k: v for k, v in exchange.headers.items() if k.lower() != "content-type"}
                exchange.headers["content-type"] = "text/html; charset=utf-8"
                exchange.tampered = True

        self.advance_clock()
        with TamperProxy(self.sb.base_url, tamper) as proxy:
            env = self.env(workspace, base_url=proxy.base_url)
            return self.refuse(
                "answers that are not JSON (HTML page, status 200)",
                "tamper proxy",
                workspace,
                env,
                [("json",)],
            )

    def unknown_extra_field(self) -> CaseResult:
        workspace = self.clone("extra_field")
        with self.writer() as writer:
            customers = writer.get("customers", limit=3, orderBy="name", order=1)
            changed = {c["id"] for c in customers}
            for customer in customers:
                writer.patch(f"customers/{customer['id']}", {"name": customer["name"] + " (renamed)"})
        self.advance_clock()

        def tamper(exchange: Exchange) -> None:
            if exchange.method == "GET" and exchange.path.startswith("/customers") and exchange.status == 200:
                body = exchange.json()
                records = body["data"] if isinstance(body["data"], list) else [body["data"]]
                for record in records:
                    record["loyaltyTier"] = "gold"
                exchange.set_json(body)

        with TamperProxy(self.sb.base_url, tamper) as proxy:
            result = self.run(workspace, self.env(workspace, base_url=proxy.base_url))
        problems = (
            []
            if result.returncode == 0
            else [f"exit {result.returncode}: {_last_meaningful_line(result.output)}"]
        )
        if not problems:
            with duckdb.connect(str(workspace.warehouse), read_only=True) as connection:
                columns = {
                    r[0]
                    for r in connection.execute(
                        "select column_name from information_schema.columns "
                        "where table_schema = 'invoicing_raw' and table_name = 'customers'"
                    ).fetchall()
                }
                if "loyalty_tier" not in columns:
                    problems.append("no column loyalty_tier in invoicing_raw.customers")
                else:
                    tiers = dict(
                        connection.execute("select id, loyalty_tier from invoicing_raw.customers").fetchall()
                    )
                    missing = [i for i in changed if tiers.get(i) != "gold"]
                    if missing:
                        problems.append(f"loyalty_tier not 'gold' for changed customers {missing}")
            problems += self.truth_mismatches(workspace)[:10]
        behaviour = f"exit {result.returncode}; new column loyalty_tier; load equals ground truth"
        return CaseResult(
            "unknown extra field on a page (customers.loyaltyTier)",
            "tamper proxy",
            behaviour if not problems else f"exit {result.returncode}",
            not problems,
            problems,
        )

    def field_type_changes(self) -> CaseResult:
        workspace = self.clone("type_change")
        with duckdb.connect(str(workspace.warehouse), read_only=True) as connection:
            old_rows = dict(
                connection.execute("select id, due_amount from invoicing_raw.customers").fetchall()
            )
            old_type = _column_type(connection, "customers", "due_amount")
        with self.writer() as writer:
            candidates = [c for c in self.sb.portal.snapshot("customers") if not c.get("deleted")]
            target = max(candidates, key=lambda c: (c["dueAmount"] % 1 != 0, c["dueAmount"]))
            writer.patch(f"customers/{target['id']}", {"email": "type.change@example.org"})
        self.advance_clock()
        as_text = str(target["dueAmount"])

        def tamper(exchange: Exchange) -> None:
            if exchange.method == "GET" and exchange.path.startswith("/customers") and exchange.status == 200:
                body = exchange.json()
                records = body["data"] if isinstance(body["data"], list) else [body["data"]]
                for record in records:
                    if record.get("id") == target["id"]:
                        record["dueAmount"] = as_text
                        exchange.set_json(body)

        with TamperProxy(self.sb.base_url, tamper) as proxy:
            before = self.fingerprint(workspace)
            result = self.run(workspace, self.env(workspace, base_url=proxy.base_url))
        problems = []
        with duckdb.connect(str(workspace.warehouse), read_only=True) as connection:
            new_rows = dict(
                connection.execute("select id, due_amount from invoicing_raw.customers").fetchall()
            )
            new_type = _column_type(connection, "customers", "due_amount")
        if new_type != old_type:
            problems.append(f"column due_amount changed type {old_type} -> {new_type}")
        corrupted = [i for i, v in old_rows.items() if i != target["id"] and new_rows.get(i) != v]
        if corrupted:
            problems.append(f"{len(corrupted)} old rows changed due_amount, e.g. {corrupted[:3]}")
        if result.returncode == 0:
            if new_rows.get(target["id"]) is None or Decimal(str(new_rows[target["id"]])) != Decimal(as_text):
                problems.append(
                    f"record {target['id']}: due_amount {new_rows.get(target['id'])!r}, "
                    f"the API said {as_text!r}"
                )
            behaviour = (
                f"exit 0; string {as_text!r} loaded as {new_rows.get(target['id'])!r}, type {new_type}"
            )
        else:
            problems += [
                f"refused but changed: {d}" for d in differences(before, self.fingerprint(workspace))
            ]
            behaviour = f"refused (exit {result.returncode}): {_last_meaningful_line(result.output)}"
        return CaseResult(
            "amount arrives as a string in one record", "tamper proxy", behaviour, not problems, problems
        )

    def record_without_last_update(self) -> CaseResult:
        workspace = self.clone("no_last_update")
        with self.writer() as writer:
            item = writer.get("items", limit=1, orderBy="name", order=1)[0]
            writer.patch(f"items/{item['id']}", {"description": "changed for the missing lastUpdate case"})
        self.advance_clock()

        def tamper(exchange: Exchange) -> None:
            if exchange.method == "GET" and exchange.path.startswith("/items") and exchange.status == 200:
                body = exchange.json()
                records = body["data"] if isinstance(body["data"], list) else [body["data"]]
                for record in records:
                    if record.get("id") == item["id"] and "lastUpdate" in record:
                        del record["lastUpdate"]
                        exchange.set_json(body)

        with TamperProxy(self.sb.base_url, tamper) as proxy:
            before = self.fingerprint(workspace)
            result = self.run(workspace, self.env(workspace, base_url=proxy.base_url))
        problems = []
        if result.returncode == 0:
            if "lastupdate" not in result.output.lower() and "last_update" not in result.output.lower():
                problems.append("exit 0 without a warning naming lastUpdate")
            problems += self.truth_mismatches(workspace, ignore=lambda line: item["id"] in line)[:10]
            behaviour = f"exit 0 with a warning: {_line_with(result.output, 'lastupdate')}"
        else:
            if item["id"] not in result.output and "lastupdate" not in result.output.lower():
                problems.append("the message names neither the record nor lastUpdate")
            if "Traceback (most recent call last)" in result.output:
                problems.append("prints a Python traceback instead of a message")
            problems += [
                f"refused but changed: {d}" for d in differences(before, self.fingerprint(workspace))
            ]
            behaviour = f"refused (exit {result.returncode}): {_last_meaningful_line(result.output)}"
        return CaseResult(
            "record without lastUpdate (items)", "tamper proxy", behaviour, not problems, problems
        )

    def record_vanished_after_listing(self) -> CaseResult:
        workspace = self.clone("vanished")
        with self.writer() as writer:
            documents = [
                d for d in self.sb.portal.snapshot("supplier_documents") if d["status"] == "approved"
            ]
            gone, kept = documents[0], documents[1] if len(documents) > 1 else None
            for document in (gone, kept):
                if document is not None:
                    writer.patch(f"supplier-documents/{document['id']}/status", {"action": "dispute"})
        self.advance_clock()

        def tamper(exchange: Exchange) -> None:
            if exchange.method == "GET" and exchange.path == f"/supplier-documents/{gone['id']}/events":
                exchange.status = 404
                exchange.set_json(
                    {
                        "error": "not found",
                        "code": 404,
                        "details": [{"path": f"/api/v2{exchange.path}", "message": "not found"}],
                    }
                )

        with TamperProxy(self.sb.base_url, tamper) as proxy:
            before = self.fingerprint(workspace)
            result = self.run(workspace, self.env(workspace, base_url=proxy.base_url))
        problems = []
        if result.returncode != 0:
            changed = differences(before, self.fingerprint(workspace))
            problems.append(
                f"exit {result.returncode} (warehouse {'changed' if changed else 'untouched'}): "
                f"{_last_meaningful_line(result.output)}"
            )
            problems += [f"changed: {line}" for line in changed[:6]]
        else:
            # The record the proxy hid is legitimately behind (its new event was never served); all
            # else must be exact, the other changed document's new event included.
            hidden = _event_ids_of(self.sb, gone["id"])
            problems += self.truth_mismatches(workspace, ignore=lambda line: _only_events_of(line, hidden))[
                :10
            ]
        outcome = "other records exact" if not problems else "see problems"
        behaviour = (
            f"exit {result.returncode}; {outcome}; "
            f"message: {_line_with(result.output, '404') or _line_with(result.output, 'not found')}"
        )
        return CaseResult(
            "404 for a supplier document listed a moment ago (its events)",
            "tamper proxy",
            behaviour,
            not problems,
            problems,
        )


def _only_events_of(line: str, event_ids: set[str]) -> bool:
    """True for a mismatch line about supplier_document_events that names only `event_ids`."""
    if not line.startswith("supplier_document_events"):
        return False
    named = set(re.findall(r"[0-9a-f]{24}", line))
    return bool(named) and named <= event_ids


def _event_ids_of(sb, supplier_document_id: str) -> set[str]:
    return {
        e["id"]
        for e in sb.portal.snapshot("supplier_document_events")
        if e.get("supplierDocumentId") == supplier_document_id
    }


def _column_type(connection, table: str, column: str) -> str | None:
    found = connection.execute(
        "select data_type from information_schema.columns where table_schema = 'invoicing_raw' "
        "and table_name = ? and column_name = ?",
        [table, column],
    ).fetchone()
    return found[0] if found else None


def _last_meaningful_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"


def _line_with(output: str, word: str) -> str:
    for line in output.splitlines():
        if word.lower() in line.lower():
            return line.strip()[:200]
    return ""

"""docs/api.md's walkthroughs run as written: every ``sh`` block under a "with curl" heading
(a clerk's autumn certification, an auditor's replay) runs in bash with curl and jq against
`abate serve --demo`, with the tokens it prints, and each call answers what the text says.

Only ``localhost:8000`` (the port) and the ``abate_...`` token placeholders are replaced. Each
curl fails on an HTTP error (``--fail-with-body``) and its answer is kept, so the checks below
read what a person would have seen after each command.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from cases.domain import CLOCK_ACTOR
from tests.abate_command import ROOT
from tests.test_api_serve import Served, _free_port, _printed

pytestmark = pytest.mark.slow

API_DOC = ROOT / "docs" / "api.md"
# Who each token variable of the walkthroughs is on the demo.
TOKEN_USERS = {"AUDITOR": "demo.belleville.auditor", "CLERK": "demo.belleville.clerk"}

# Each curl: fail on an HTTP error status (with the answer shown), and keep its arguments and
# answer in $CALLS/N.args and N.out, numbered through a file (a curl inside $( ) runs in a
# subshell, where a shell variable would not count on).
PREAMBLE = r"""set -euo pipefail
curl() {
  local n=$(( $(cat "$CALLS/count") + 1 ))
  echo "$n" > "$CALLS/count"
  printf '%s\n' "$@" > "$CALLS/$n.args"
  command curl --fail-with-body --show-error "$@" | tee "$CALLS/$n.out"
  return "${PIPESTATUS[0]}"
}
"""


def walkthroughs(text: str) -> dict[str, list[str]]:
    """The ``sh`` blocks of each section whose heading says "with curl", by heading (a
    subsection stays in its section; a ``#`` inside a code block is no heading)."""
    found: dict[str, list[str]] = {}
    heading, level, fence, block = None, 0, None, []
    for line in text.splitlines():
        if fence is not None:
            if line.startswith("```"):
                if heading and fence == "sh":
                    found[heading].append("\n".join(block) + "\n")
                fence, block = None, []
            else:
                block.append(line)
        elif line.startswith("```"):
            fence = line[3:].strip()
        elif match := re.match(r"(#{1,6}) (.*)", line):
            if heading and len(match[1]) > level:
                continue
            heading, level = (match[2], len(match[1])) if "with curl" in match[2] else (None, 0)
            if heading:
                found.setdefault(heading, [])
    return found


WALKTHROUGHS = walkthroughs(API_DOC.read_text(encoding="utf-8"))


@dataclass
class Call:
    args: list[str]
    out: str

    @property
    def url(self) -> str:
        return next(a for a in reversed(self.args) if "/api/v1/" in a or "/health" in a)

    def json(self):
        return json.loads(self.out)


def _run(block: str, base: str, tokens: dict[str, str], folder: Path) -> list[Call]:
    """Run one block as written (placeholders filled) in ``folder``; its curl calls in order."""
    script = block.replace("localhost:8000", base.removeprefix("http://"))
    script = re.sub(r"^(\w+)=abate_\.\.\.", lambda m: f"{m[1]}={tokens[TOKEN_USERS[m[1]]]}",
                    script, flags=re.M)
    calls_dir = folder / "calls"
    shutil.rmtree(calls_dir, ignore_errors=True)
    calls_dir.mkdir()
    (calls_dir / "count").write_text("0")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(folder), "CALLS": str(calls_dir),
           **{variable: tokens[user] for variable, user in TOKEN_USERS.items()}}
    done = subprocess.run(["bash", "-c", PREAMBLE + script], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the block failed:\n{script}\n{done.stdout}\n{done.stderr}"
    count = int((calls_dir / "count").read_text())
    return [Call((calls_dir / f"{n}.args").read_text().splitlines(),
                 (calls_dir / f"{n}.out").read_text()) for n in range(1, count + 1)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`abate serve --demo` on a free port: (base URL, the printed tokens by user)."""
    for tool in ("bash", "curl", "jq"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: docs/api.md's curl walkthroughs need bash, "
                        "curl and jq")
    folder = tmp_path_factory.mktemp("walkthrough-store")
    served = Served(f"sqlite:///{folder / 'abate.sqlite3'}", _free_port())
    try:
        base, tokens = _printed(served.banner())
        yield base, tokens
        assert served.stop(signal.SIGTERM) == 0
    finally:
        if served.process.poll() is None:
            served.process.kill()


def test_the_api_doc_has_both_walkthroughs():
    assert set(WALKTHROUGHS) == {"An auditor's replay, with curl",
                                 "A clerk's autumn certification with curl"}
    assert all(WALKTHROUGHS.values())


def test_an_auditors_replay(demo, tmp_path):
    base, tokens = demo
    calls = _run("".join(WALKTHROUGHS["An auditor's replay, with curl"]), base, tokens, tmp_path)
    (history, history_page, as_of, known_source, known, verify, by_seal, by_case, page,
     next_page, packet) = calls

    # every event: actor, business and recorded times, rule and rule version
    events = history.json()["events"]
    assert all(e["actor"] and e["occurred_at"] and e["recorded_at"] and e["rule"]
               and e["rule_version"] for e in events), events
    assert {e["actor"] for e in events} == {"demo.belleville.inspector", CLOCK_ACTOR}
    assert (history.json()["total"], history.json()["next_offset"]) == (len(events), None)
    # a page of two from the third: the same events, the whole count, where the next starts
    paged = history_page.json()
    assert len(events) > 4 and paged["events"] == events[2:4]
    assert (paged["total"], paged["limit"], paged["offset"], paged["next_offset"]) == (
        len(events), 2, 2, 4)
    # the morning the notice was served, before the owner complied that afternoon
    facts = {e["type"]: e["occurred_at"] for e in events}
    assert facts["NoticeServed"] < "2026-01-07T09:00:00-06:00" < facts["ComplianceVerified"]
    assert facts["ComplianceVerified"].startswith("2026-01-07T1")  # the afternoon
    assert as_of.json()["status"] == "notice_served"
    # known just after the last event was recorded: the whole case; a moment before the
    # demo was loaded: nothing
    assert known_source.url == history.url
    assert known.json()["status"] == "closed" and "exists" not in known.json()
    assert len(known.json()["events"]) == len(events)
    before = httpx.get(f"{base}/api/v1/belleville/cases/BV-2026-001",
                       params={"known_at": events[0]["recorded_at_utc"]},
                       headers={"Authorization": f"Bearer {tokens['demo.belleville.auditor']}"})
    assert before.json()["exists"] is False  # shown to the second, recorded within it
    # nothing altered; the store matches the seal the demo's load took
    assert verify.json()["ok"] is True and verify.json()["problems"] == []
    assert by_seal.json()["matches"] is True and by_seal.json()["kept_seal"]["seal_id"] == 1
    # who read this case: the auditor's own reads above, newest first
    rows = by_case.json()["entries"]
    assert {(r["user"], r["route"]) for r in rows} >= {
        ("demo.belleville.auditor", "cases.history"), ("demo.belleville.auditor", "cases.show")}
    assert [r["id"] for r in rows] == sorted((r["id"] for r in rows), reverse=True)
    # one user's requests a page at a time: the second page goes on below the first
    first, second = page.json()["entries"], next_page.json()["entries"]
    assert len(first) == len(second) == 2
    assert max(r["id"] for r in second) < min(r["id"] for r in first)
    assert {r["user"] for r in first + second} == {"demo.belleville.auditor"}
    # the packet, and its download in the access log under the request id sent
    assert packet.json()["case_ref"] == "BV-2026-001"
    exports = httpx.get(f"{base}/api/v1/audit/access-log",
                        params={"case_ref": "BV-2026-001", "limit": 5},
                        headers={"Authorization": f"Bearer {tokens['demo.belleville.auditor']}"})
    [row] = [r for r in exports.json()["entries"] if r["request_id"] == "audit-2026-12-04"]
    assert (row["route"], row["action"], row["status"]) == ("cases.referral", "export", 200)


def test_a_clerks_autumn_certification(demo, tmp_path):
    base, tokens = demo
    # The blocks of one walkthrough are one terminal session: $API carries over.
    session = "".join(WALKTHROUGHS["A clerk's autumn certification with curl"])
    export_csv, export_json, certify, certification, reconcile = _run(
        session, base, tokens, tmp_path)

    # 1. the list as of the cut-off, saved under the name the answer gives, and its totals
    assert "as_of=2026-11-15" in export_csv.url and "format=json" in export_json.url
    saved = tmp_path / "tax-roll-belleville-2026-dane-as-of-2026-11-15.csv"
    assert saved.exists(), sorted(p.name for p in tmp_path.iterdir())
    listed = list(csv.DictReader(saved.open(encoding="utf-8")))
    summary = export_json.json()["summary"]  # what `jq .summary` printed
    assert summary["charges"] == len(listed) > 0
    assert {r["county"] for r in listed} == {"Dane"} and summary["as_of"] == "2026-11-15"
    assert {"charges", "total", "by_charge_type", "by_county"} <= set(summary)

    # 2. certified: the CSV with the seal's columns, and the seal's line in the headers
    assert certify.url.endswith("/tax-roll/certify?format=csv")
    certified = list(csv.DictReader((tmp_path / "certified-dane-2026.csv").open(encoding="utf-8")))
    assert certified and {r["county"] for r in certified} == {"Dane"}
    headers = (tmp_path / "headers.txt").read_text(encoding="utf-8")
    seal = re.search(r"^x-abate-seal: abate-seal (\d+) position (\d+) events \d+ cases \d+ "
                     r"digest ([0-9a-f]{64})\r?$", headers, flags=re.M | re.I)
    assert seal, headers
    assert {(r["seal_id"], r["seal_position"], r["seal_digest"]) for r in certified} == {
        seal.groups()}
    # 3. every listed charge now certified, by the clerk
    shown = certification.json()["summary"]["certification"]  # what `jq` printed
    assert shown["certified_charges"] == len(certified)
    assert shown["certified_by"] == ["demo.belleville.clerk"]
    assert shown["last_certified_at"] and shown["first_certified_at"]
    # 4. the auditor's reconciliation: payments after certification, per county
    assert {"payments_after_certification", "to_credit_or_refund_by_county"} <= set(
        reconcile.json())
    assert "tax-roll/reconcile?tax_year=2026" in reconcile.url

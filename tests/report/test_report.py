"""The HTML report of an output folder: what it shows (read back from the page), bad input, and its imports."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from html_tree import Element, parse

from privdyn.cli import main
from privdyn.report import ReportError, collect, write_report
from privdyn.report.collect import format_value

EXPECTED = {"langevin-fig1", "langevin-tightness", "langevin-table1", "hsgd-fig1b"}


def _results(folder: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in folder.glob("*/result.json")}


def _page(folder: Path) -> Element:
    return parse((folder / "report.html").read_text(encoding="utf-8"))


def _flat_keys(config: dict, prefix: str = "") -> list[str]:
    return [key for k, v in config.items()
            for key in (_flat_keys(v, f"{prefix}{k}.") if isinstance(v, dict) else [prefix + k])]


def _status(check: dict) -> str:
    if check["passed"] is not None:
        return "passed" if check["passed"] else "failed"
    return "finding" if check["kind"] == "finding" else "not_applicable"


def test_every_experiment_figure_and_check_is_on_the_page(reproduction):
    results = _results(reproduction)
    assert set(results) == EXPECTED
    page = _page(reproduction)
    for name, result in results.items():
        section = page.find("section", id=f"exp-{name}")
        images = [img.attrs["src"] for img in section.iter("img")]
        links = [a.attrs["href"] for a in section.iter("a")]
        pngs = [a for a in result["artifacts"] if a.endswith(".png")]
        assert pngs and images == [f"{name}/{png}" for png in pngs]
        for artifact in result["artifacts"]:  # the SVG beside each PNG, series.csv, and result.json are linked
            assert f"{name}/{artifact}" in links and (reproduction / name / artifact).is_file()
        assert f"{name}/result.json" in links
        assert result["paper"].rsplit(", ", 1)[-1].split(" (")[0] in section.find("p", class_="meta").text
        rows = list(section.find("table", class_="checks").iter("tr", class_="checks-row"))
        assert [(row.find("td", class_="name").text.replace(" ", ""), row.attrs["data-status"]) for row in rows] == [
            (c["name"].replace(" ", ""), _status(c)) for c in result["checks"]]
        config = {row.find("th").text: row.find("td").text for row in section.find("table", class_="config").iter("tr")}
        assert set(config) == set(_flat_keys(result["config"]))


def test_guarantee_label_of_every_privacy_curve(reproduction):
    page = _page(reproduction)
    labelled = 0
    for name, result in _results(reproduction).items():
        expected = [(s["name"], s["params"]["guarantee"]) for s in result["series"] if "guarantee" in s["params"]]
        if not expected:
            assert not list(page.find("section", id=f"exp-{name}").iter("details", class_="curves"))
            continue
        table = page.find("section", id=f"exp-{name}").find("details", class_="curves").find("tbody")
        shown = [(next(row.iter("td")).text, row.find("span", class_="guarantee").text) for row in table.iter("tr")]
        assert shown == expected
        labelled += len(expected)
    assert labelled >= 20  # langevin-fig1 (bound), langevin-tightness (exact, lower_bound, bound), hsgd-fig1b


def test_failed_claims_come_first_with_their_notes(reproduction):
    results = _results(reproduction)
    failed = [(name, c) for name, r in results.items() for c in r["checks"] if c["passed"] is False]
    assert failed and all(c["kind"] == "paper_claim" and c["note"] for _, c in failed)  # hsgd-fig1b's proxy claim
    html = (reproduction / "report.html").read_text(encoding="utf-8")
    assert html.index('id="failures"') < html.index('id="papers"') < html.index('class="experiment"')
    cards = list(parse(html).find("section", id="failures").iter("article", class_="failure"))
    assert len(cards) == len(failed)
    for card, (name, check) in zip(cards, failed, strict=True):
        assert card.find("a").attrs["href"] == f"#exp-{name}" and card.find("code").text == check["name"]
        assert " ".join(check["note"].split()) in card.find("p", class_="note").text


def test_front_page_counts_per_paper(reproduction):
    results = _results(reproduction)
    page = _page(reproduction)
    papers = {h3.text.split()[0] for h3 in page.find("section", id="papers").iter("h3")}
    assert papers == {"langevin", "hsgd"}
    for row in page.find("section", id="papers").iter("tr"):
        cells = list(row.iter("td"))
        if not cells or cells[0].text not in results:
            continue
        checks = results[cells[0].text]["checks"]
        for cell, kind in zip(cells[2:4], ("invariant", "paper_claim"), strict=True):
            total = sum(c["kind"] == kind for c in checks)
            passed = sum(c["kind"] == kind and c["passed"] is True for c in checks)
            assert cell.text.startswith(f"{passed}/{total}") if total else cell.text == "—"
        findings = sum(c["kind"] == "finding" for c in checks)
        assert cells[4].text == (str(findings) if findings else "—")


def test_environment_and_timing(reproduction):
    results = _results(reproduction)
    section = _page(reproduction).find("section", id="environment")
    env = next(iter(results.values()))["environment"]
    assert all(r["environment"] == env for r in results.values())
    text = section.text
    assert env["privdyn"] in text and env["python"] in text and env["numpy"] in text
    assert env["git_commit"] is None or env["git_commit"][:10] in text
    timed = [row.find("a").text for row in section.find("table", class_="timing").find("tbody").iter("tr")]
    assert timed == [e["experiment"] for e in json.loads((reproduction / "summary.json").read_text())["experiments"]]


def test_report_command_rewrites_the_same_page(reproduction, capsys):
    before = (reproduction / "report.html").read_bytes()
    assert main(["report", str(reproduction)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {reproduction / 'report.html'}"
    assert (reproduction / "report.html").read_bytes() == before
    assert oct((reproduction / "report.html").stat().st_mode & 0o777) != oct(0o600)  # readable beyond the owner


def test_report_of_one_experiment_folder(reproduction, tmp_path):
    folder = tmp_path / "langevin-fig1"
    shutil.copytree(reproduction / "langevin-fig1", folder)
    write_report(folder)
    page = _page(folder)
    assert [img.attrs["src"] for img in page.iter("img")] == ["figure.png"]
    assert [a.attrs["href"] for a in page.iter("a") if a.text == "SVG"] == ["figure.svg"]


def _bad_folders(tmp_path: Path, reproduction: Path) -> dict[str, Path]:
    result = (reproduction / "langevin-table1" / "result.json").read_text()
    cases = {}
    for case, content in {
        "empty folder": None,
        "not JSON": "{not json",
        "not UTF-8": b"\xff\xfe\x00",
        "a JSON list": "[]",
        "a key missing": json.dumps({k: v for k, v in json.loads(result).items() if k != "checks"}),
        "a wrong type": json.dumps({**json.loads(result), "seed": "zero"}),
        "a check without a kind": json.dumps({**json.loads(result), "checks": [{"name": "x"}]}),
    }.items():
        folder = tmp_path / case.replace(" ", "_")
        (folder / "exp").mkdir(parents=True)
        if isinstance(content, bytes):
            (folder / "exp" / "result.json").write_bytes(content)
        elif content is not None:
            (folder / "exp" / "result.json").write_text(content)
        cases[case] = folder
    cases["not a directory"] = tmp_path / "missing"
    return cases


def test_bad_input_exits_2_with_one_line_and_writes_nothing(reproduction, tmp_path, capsys):
    for case, folder in _bad_folders(tmp_path, reproduction).items():
        status = main(["report", str(folder)])
        out, err = capsys.readouterr()
        assert status == 2, case
        assert len(err.strip().splitlines()) == 1 and err.startswith("privdyn: error:"), (case, err)
        assert not (folder / "report.html").exists() and not list(tmp_path.rglob("*.tmp")), case
        assert out == ""


def test_unreadable_result_is_a_report_error(reproduction, tmp_path, monkeypatch):
    folder = tmp_path / "out"
    shutil.copytree(reproduction / "langevin-table1", folder / "langevin-table1")
    real = Path.read_text

    def deny(self: Path, *args: object, **kwargs: object) -> str:
        if self.name == "result.json":
            raise PermissionError(13, "Permission denied")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", deny)
    with pytest.raises(ReportError, match="cannot read .*result.json: Permission denied"):
        collect(folder)
    assert not (folder / "report.html").exists()


def test_format_value():
    assert format_value(None) == "—" and format_value(True) == "true" and format_value(3) == "3"
    assert format_value(0.1234567891) == "0.123457" and format_value(-2.5e-12) == "−2.5e−12"
    assert format_value("inf") == "∞" and format_value("-inf") == "−∞" and format_value("nan") == "NaN"
    long = format_value([0.5 * i for i in range(100)], limit=30)
    assert long.startswith("[0, 0.5, ") and long.endswith(", …, 49.5] (100 values)") and len(long) <= 30
    assert format_value([1, 2.5]) == "[1, 2.5]"
    assert format_value({"a": 1}) == '{"a": 1}'


def test_the_report_imports_no_engine():
    code = ("import sys, privdyn.report; "
            "bad = sorted(m for m in sys.modules if m.startswith(('privdyn.privacy', 'privdyn.dynamics', "
            "'privdyn.algorithms', 'privdyn.models', 'privdyn.tuning', 'privdyn.experiments.registry', "
            "'privdyn.runs.runner', 'matplotlib', 'scipy', 'numba', 'sklearn', 'torch'))); print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert out.stdout.strip() == "[]"


def test_privacy_curves_without_a_known_guarantee_label_are_flagged(reproduction, tmp_path):
    folder = tmp_path / "out" / "langevin-tightness"
    shutil.copytree(reproduction / "langevin-tightness", folder)
    result = json.loads((folder / "result.json").read_text())
    assert [s["y_label"] for s in result["series"][:2]] == ["rdp_epsilon", "rdp_epsilon"]
    del result["series"][0]["params"]["guarantee"]
    result["series"][1]["params"]["guarantee"] = "approximately"
    (folder / "result.json").write_text(json.dumps(result))
    write_report(folder.parent)
    rows = list(_page(folder.parent).find("details", class_="curves").find("tbody").iter("tr"))
    flagged = [next(row.iter("td")).text for row in rows if list(row.iter("span", class_="missing"))]
    assert flagged == [result["series"][0]["name"], result["series"][1]["name"]]
    assert len(rows) == len(result["series"])


def test_failure_cards_name_every_value_and_the_legend_defines_the_kinds(reproduction):
    page = _page(reproduction)
    cards = list(page.find("section", id="failures").iter("article", class_="failure"))
    assert cards
    for card in cards:
        fields = {div.find("dt").text: div.find("dd").text for div in card.find("dl", class_="values").iter("div")}
        assert {"expected", "measured", "tolerance", "margin"} <= set(fields)
        assert all(value.strip() and value != "—" for value in fields.values()), fields
    legend = page.find("details", id="legend").text
    for word in ("invariant", "paper claim", "finding", "no expected outcome", "margin", "cost", "full run"):
        assert word in legend


def test_margins_are_shown_in_the_check_tables(reproduction):
    results = _results(reproduction)
    page = _page(reproduction)
    for name, result in results.items():
        rows = list(page.find("section", id=f"exp-{name}").find("table", class_="checks").iter("tr",
                                                                                              class_="checks-row"))
        for row, check in zip(rows, result["checks"], strict=True):
            margin = list(row.iter("td"))[7].text
            if check.get("margin") is not None:
                assert margin == format_value(check["margin"])
                assert (check["margin"] >= 0) == (check["passed"] is True)


def test_cost_survives_a_cached_rerun_and_the_paper_is_linked(reproduction, tmp_path):
    results = _results(reproduction)
    page = _page(reproduction)
    for name, result in results.items():
        assert isinstance(result["compute_s"], float) and result["compute_s"] >= 0
        meta = page.find("section", id=f"exp-{name}").find("p", class_="meta")
        assert any(a.attrs["href"].startswith("https://arxiv.org/pdf/") for a in meta.iter("a"))
    out = tmp_path / "again"
    shutil.copytree(reproduction, out)
    assert main(["reproduce", "--quick", "--only", "langevin-table1", "--out", str(out), "--executor", "serial"]) == 0
    again = json.loads((out / "langevin-table1" / "result.json").read_text())
    assert again["compute_s"] == results["langevin-table1"]["compute_s"]  # the cached rerun keeps the first cost


def test_a_quick_check_whose_full_run_differs_says_so(reproduction, tmp_path, monkeypatch):
    from privdyn.report import full_runs

    result = _results(reproduction)["langevin-table1"]
    check = result["checks"][0]
    assert _status(check) == "passed"
    record = {"langevin-table1": {"source": "privdyn run langevin-table1, a test record",
                                  "checks": {check["name"]: "failed"}}}
    monkeypatch.setattr(full_runs, "_records", lambda: record)
    folder = tmp_path / "out"
    shutil.copytree(reproduction / "langevin-table1", folder / "langevin-table1")
    write_report(folder)
    section = _page(folder).find("section", id="exp-langevin-table1")
    assert "1 check gave another outcome in the recorded full run" in " ".join(section.text.split())
    first = next(section.find("table", class_="checks").iter("tr", class_="checks-row"))
    assert "Full run: failed in the full configuration (privdyn run langevin-table1, a test record)" in first.text

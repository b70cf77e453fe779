"""``scorecore calibrate`` and ``scorecore report --labels``: the κ gate's exit codes, bad label
files, and the report's calibration section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scorecore.evals import ScoreRow, calibrate
from scorecore_adapters.report import render_report
from tests.cli_runs import run

SCORERS = '''
from scorecore import create_scorer

judge = create_scorer(id="judge", description="d").generate_score(
    lambda ctx: float(ctx.run.extra["s"]))
noisy = create_scorer(id="noisy", description="d").generate_score(
    lambda ctx: float(ctx.run.extra["n"]))
'''


def labels_file(path: Path, labels: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in labels.items()))
    return path


@pytest.fixture
def batch(tmp_path: Path) -> dict[str, bool]:
    """A stored batch "b" of 60 items: judge agrees with the labels, noisy with half of them.

    Returns the labels (item id -> pass)."""
    (tmp_path / "cal_scorers.py").write_text(SCORERS)
    labels = {f"item-{i}": i % 2 == 0 for i in range(60)}
    lines = []
    for i, (item, label) in enumerate(labels.items()):
        judge = 0.9 if label else 0.1
        noisy = 0.9 if (label if i % 4 < 2 else not label) else 0.1
        lines.append(json.dumps({"id": item, "input": i, "output": i,
                                 "extra": {"s": judge, "n": noisy}}))
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(lines) + "\n")
    code, _, err = run("eval", str(tmp_path / "cal_scorers.py"), "--data", str(data),
                       "--store", store(tmp_path), "--batch-id", "b")
    assert code == 0, err
    return labels


def store(tmp_path: Path) -> str:
    return f"sqlite:{tmp_path / 'r.db'}"


def test_calibrate_prints_each_scorers_agreement(tmp_path: Path, batch: dict[str, bool]) -> None:
    """Without a gate: a table of κ, accuracy, precision, recall with intervals and the fitted
    threshold, each scorer's confusion matrix, the one-sided items; exit 0."""
    labels = labels_file(tmp_path / "labels.jsonl", {**batch, "stray": True})
    code, out, err = run("calibrate", "b", "--labels", str(labels), "--store", store(tmp_path))
    assert (code, err) == (0, "")
    assert out.startswith(f"calibrate b against {labels}: 61 label(s), binary (95% bootstrap "
                          "intervals, 1000 resamples, seed 0)\n")
    assert re.search(r"^judge +60 +>= 0\.5 +1\.000 \[1\.000, 1\.000\] +1\.000 \[1\.000, "
                     r"1\.000\] .* +0\.9 \(kappa 1\.000\)$", out, re.MULTILINE), out
    assert re.search(r"^noisy +60 +>= 0\.5 +0\.000 \[-0\.\d+, 0\.\d+\] +0\.500 ", out,
                     re.MULTILINE), out
    assert ("judge: pass/fail at >= 0.5 (rows: label, columns: scorer)\n"
            "  label  fail  pass\n  fail     30     0\n  pass      0    30\n") in out
    assert "fitted on them: its kappa is optimistic" in out
    assert "labels without rows in b: stray" in out
    assert out.endswith("no gate: --min-kappa K exits 1 when a scorer's kappa interval "
                        "reaches below K\n")


def test_min_kappa_gates_on_the_intervals_lower_end(tmp_path: Path,
                                                    batch: dict[str, bool]) -> None:
    """--min-kappa: exit 0 when every scorer's κ interval is above it, 1 when one reaches
    below it (naming the scorer, κ and the lower end); --scorer narrows the gate."""
    labels = labels_file(tmp_path / "labels.jsonl", batch)
    base = ("calibrate", "b", "--labels", str(labels), "--store", store(tmp_path))
    code, out, _ = run(*base, "--min-kappa", "0.6")
    assert code == 1
    assert re.search(r"^verdict: failed \(min kappa 0\.6, read at the interval's lower end\)\n"
                     r"  noisy: kappa 0\.000, interval's lower end -0\.\d+ < 0\.6\n\Z", out,
                     re.MULTILINE), out
    code, out, _ = run(*base, "--min-kappa", "0.6", "--scorer", "judge")
    assert code == 0
    assert out.endswith("verdict: passed: every scorer's kappa interval is above 0.6\n")
    assert "noisy" not in out
    code, out, _ = run(*base, "--min-kappa", "0.6", "--json")
    document = json.loads(out)
    assert (code, document["exitCode"], document["verdict"], document["minKappa"]) == (
        1, 1, "failed", 0.6)
    assert [s["id"] for s in document["scorers"]] == ["judge", "noisy"]
    assert document["scorers"][0]["kappa"]["value"] == 1.0
    assert document["scorers"][0]["fittedThreshold"]["fittedOnLabels"] is True
    assert document["failedChecks"] == [
        line.strip() for line in run(*base, "--min-kappa", "0.6")[1].splitlines()[-1:]]


def test_undefined_kappa_fails_the_gate_and_says_so(tmp_path: Path,
                                                    batch: dict[str, bool]) -> None:
    """Labels of one class give no κ: the gate fails (never a pass on nothing), saying why."""
    labels = labels_file(tmp_path / "labels.jsonl", {"item-0": True, "item-2": True})
    code, out, _ = run("calibrate", "b", "--labels", str(labels), "--store", store(tmp_path),
                       "--scorer", "judge", "--min-kappa", "0.5")
    assert code == 1
    assert ("  judge: kappa is undefined (the labels hold one class only (pass)), so it "
            "cannot reach 0.5\n") in out
    assert "judge: kappa undefined: the labels hold one class only (pass)" in out


def test_ordinal_and_continuous_labels(tmp_path: Path, batch: dict[str, bool]) -> None:
    """--kind ordinal with --scale prints quadratic κ and the grades table; --kind continuous
    Spearman and Kendall; string labels take their value from --label-value."""
    grades = {item: ("good" if passes else "bad") for item, passes in batch.items()}
    labels = labels_file(tmp_path / "grades.jsonl", grades)
    base = ("calibrate", "b", "--labels", str(labels), "--store", store(tmp_path),
            "--scorer", "judge", "--label-value", "good=5", "--label-value", "bad=1")
    code, out, err = run(*base, "--kind", "ordinal", "--scale", "1:5")
    assert code == 0, err
    assert "quadratic kappa" in out
    assert "judge: grades (scores rounded to the nearest grade) (rows: label, columns: scorer)" \
        in out
    code, out, err = run(*base, "--kind", "continuous", "--scale", "1:5", "--json")
    assert code == 0, err
    (judge,) = json.loads(out)["scorers"]
    assert (judge["spearman"]["value"], judge["kendall"]["value"]) == (1.0, 1.0)
    assert judge["mae"]["value"] == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "label": true}\nnot json\n',
         "labels.jsonl:2: invalid JSON: Expecting value (column 1)"),
        ('{"id": "a", "label": true}\n{"id": "a", "label": false}\n',
         "labels.jsonl:2: field 'id': \"a\" repeats line 1"),
        ('{"label": true}\n', "labels.jsonl:1: field 'id' is missing"),
        ('{"id": 1.5, "label": true}\n',
         "labels.jsonl:1: field 'id' must be a non-empty string or an integer, got 1.5"),
        ('{"id": "a"}\n', "labels.jsonl:1: field 'label' is missing"),
        ('{"id": "a", "label": null}\n', "labels.jsonl:1: field 'label' must be true/false, "
                                          "a number or a non-empty string, got null"),
        ('{"id": "a", "label": NaN}\n', "labels.jsonl:1: field 'label' must be a finite "
                                         "number, got NaN"),
        ('[1, 2]\n{"id": "a"}\n', 'labels.jsonl:1: expected a JSON object {"id": …, '
                                   '"label": …}, got list\n'),  # then line 2's, on a line
        ("\n\n", "holds no labels"),
        ('{"id": "item-0", "label": 3}\n', "calibrate: the label of item 'item-0' must be "
                                            "true/false or 1/0 for binary labels"),
        ('{"id": "item-0", "label": "yes"}\n', "is a string without a value in label_values"),
    ],
)
def test_bad_label_files_are_usage_errors_naming_the_line(
    tmp_path: Path, batch: dict[str, bool], content: str, message: str
) -> None:
    """A bad labels file is a line on stderr per problem naming the file, the line and the
    field (or the item), exit 2, for calibrate and for report --labels alike."""
    path = tmp_path / "labels.jsonl"
    path.write_text(content)
    for argv in (("calibrate", "b", "--min-kappa", "0.5"),
                 ("report", "b", "-o", str(tmp_path / "r.html"))):
        code, out, err = run(*argv, "--labels", str(path), "--store", store(tmp_path))
        assert (code, out) == (2, "")
        assert message in err
        assert err.count("\n") == 1 + message.count("\n")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--labels", "missing.jsonl"], "cannot read labels file missing.jsonl"),
        (["--scorer", "nope"], "no rows of scorer(s) 'nope' (the rows' scorers: judge, noisy)"),
        (["--min-kappa", "1.5"], "expected a kappa in [-1, 1], got '1.5'"),
        (["--threshold", "nan"], "expected a finite number, got 'nan'"),
        (["--scale", "1-5", "--kind", "ordinal"], "--scale must look like LOW:HIGH"),
        (["--scale", "1:5"], "scale is for ordinal and continuous labels"),
        (["--label-value", "good"], "--label-value must look like TEXT=VALUE"),
        (["--label-value", "good=great"], "--label-value must look like TEXT=NUMBER"),
    ],
)
def test_bad_options_are_usage_errors(
    tmp_path: Path, batch: dict[str, bool], argv: list[str], message: str
) -> None:
    """A missing labels file, an unknown scorer or a bad option: one line, exit 2."""
    labels = labels_file(tmp_path / "labels.jsonl", batch)
    code, _, err = run("calibrate", "b", "--labels", str(labels), "--store", store(tmp_path),
                       *argv)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1


def test_calibrate_of_an_unknown_batch_is_a_usage_error(tmp_path: Path,
                                                        batch: dict[str, bool]) -> None:
    """No rows for the batch: exit 2, before the labels are judged."""
    labels = labels_file(tmp_path / "labels.jsonl", batch)
    code, _, err = run("calibrate", "nope", "--labels", str(labels), "--store", store(tmp_path))
    assert code == 2
    assert "no rows for batch 'nope'" in err


def test_report_with_labels_has_a_calibration_section(tmp_path: Path,
                                                      batch: dict[str, bool]) -> None:
    """report --labels adds the calibration table, the confusion matrices and the fitted
    threshold marked as fitted on these labels; report --threshold ID=MIN is its pass rule;
    without --labels there is no such section."""
    labels = labels_file(tmp_path / "labels.jsonl", batch)
    target = tmp_path / "r.html"
    code, _, err = run("report", "b", "--labels", str(labels), "--store", store(tmp_path),
                       "-o", str(target), "--threshold", "noisy=0.95")
    assert code == 0, err
    page = target.read_text()
    section = page[page.index('<section id="calibration">'):]
    section = section[: section.index("</section>")]
    assert "<h2>Calibration against human labels</h2>" in section
    assert re.search(r"<tr><td>judge</td><td class=num>60</td><td class=num>≥ 0\.5</td>"
                     r"<td class=num>1\.000 <span class=\"muted\">\[1\.000, 1\.000\]</span>",
                     section), section
    assert "<td class=num>≥ 0.95</td>" in section
    assert "(κ 1.000, fitted on these labels)" in section
    assert '<table class="confusion"><caption>pass/fail at ≥ 0.5</caption>' in section
    assert "noisy</h3>" in section
    code, _, _ = run("report", "b", "--store", store(tmp_path), "-o", str(target))
    assert code == 0
    assert 'id="calibration"' not in target.read_text()
    code, _, err = run("report", "b", "--store", store(tmp_path), "--kind", "ordinal")
    assert code == 2
    assert ("--kind, --scale, --label-value and --min-kappa describe --labels: give --labels "
            "FILE") in err


def test_the_calibration_section_escapes_ids_and_reasons() -> None:
    """Scorer and item ids in the section are data, never markup."""
    rows = [ScoreRow(id=f"r{i}", scorer_id="<b>judge</b>", run_id=f"b:{item}", batch_id="b",
                     status="scored", score=0.9, dataset_item_id=item)
            for i, item in enumerate(["<script>x()</script>", "ok"])]
    result = calibrate(rows, {"ok": True, "<img src=x>": False})
    page = render_report(rows, batch_id="b", calibration=result)
    section = page[page.index('<section id="calibration">'):]
    assert "<script>x()" not in section
    assert "<img src=x>" not in section
    assert "&lt;b&gt;judge&lt;/b&gt;" in section
    assert "&lt;script&gt;x()&lt;/script&gt;" in section
    assert "the labels hold one class only (pass)" in section


JUDGED = '''
import re

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore_adapters.testing import FunctionJudge


def judged(name, verdict):
    return create_scorer(
        id=name, description="d",
        # A model id per judge: the judge cache keeps their answers apart.
        judge=JudgeConfig(model=FunctionJudge(verdict, model_id=name), instructions="Rate."),
    ).generate_score(ScorePromptStep(description="rate",
                                     create_prompt=lambda ctx: f"Answer: {ctx.run.output}"))


def agrees(request):  # a judge that sees what the labels say
    return {"score": 0.9 if "good" in request.messages[-1].content else 0.1}


def at_chance(request):  # a judge right on half the items, whatever the label
    number = int(re.search(r"Answer: \\w+ (\\d+)", request.messages[-1].content).group(1))
    return {"score": 0.9 if number % 4 < 2 else 0.1}


sharp = judged("sharp", agrees)
coin = judged("coin", at_chance)
plain = create_scorer(id="plain", description="d").generate_score(lambda ctx: 1.0)
'''


def _judged_batch(tmp_path: Path, *flags: str) -> tuple[int, str, str]:
    (tmp_path / "judged_scorers.py").write_text(JUDGED)
    items, labels = [], {}
    for i in range(40):
        good = i % 2 == 0
        items.append({"id": f"q{i}", "input": "q", "output": f"{'good' if good else 'bad'} {i}"})
        labels[f"q{i}"] = good
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items))
    labels_path = labels_file(tmp_path / "labels.jsonl", labels)
    return run("eval", str(tmp_path / "judged_scorers.py"), "--data", str(data), "--store",
               store(tmp_path), "--batch-id", "j", "--labels", str(labels_path), *flags)


def test_eval_with_labels_prints_each_judged_scorers_agreement(tmp_path: Path) -> None:
    """``eval --labels``: after the summary, κ with its interval for each LLM-judged scorer;
    a judge at chance gets the one-line caveat, one that agrees does not; the scorer without
    a judge is not measured; the verdict and exit code are the batch's."""
    code, out, err = _judged_batch(tmp_path, "--output", str(tmp_path / "r.json"))
    assert code == 0, err + out
    labels = tmp_path / "labels.jsonl"
    assert (f"agreement with the labels in {labels} (40 label(s), binary; 95% bootstrap "
            "intervals):\n") in out
    assert ("  sharp: kappa 1.000 [1.000, 1.000], accuracy 1.000 [1.000, 1.000] over 40 "
            "labelled item(s), passing at >= 0.5\n") in out
    assert re.search(r"^  coin: kappa 0\.000 \[-0\.\d{3}, 0\.\d{3}\], accuracy 0\.500 ", out,
                     re.MULTILINE), out
    assert ("  coin: agreement with your labels is at chance level: do not gate on this "
            "judge\n") in out
    assert "sharp: agreement with your labels" not in out
    assert "  plain:" not in out
    assert out.index("agreement with the labels") > out.index("scorer ")
    assert out.splitlines()[-1] == "verdict: passed"
    document = json.loads((tmp_path / "r.json").read_text())
    caveats = {s["id"]: s["caveat"] for s in document["calibration"]["scorers"]}
    assert caveats == {"coin": "agreement with your labels is at chance level: do not gate on "
                               "this judge", "sharp": None}


def test_eval_with_a_bad_labels_file_runs_nothing(tmp_path: Path) -> None:
    """A labels file that does not fit ``--kind`` is a usage error before any item runs."""
    bad = labels_file(tmp_path / "bad.jsonl", {"q0": 0.5})
    code, out, err = _judged_batch(tmp_path, "--labels", str(bad))
    assert (code, out) == (2, "")
    assert "the label of item 'q0' must be true/false or 1/0 for binary labels" in err
    assert not (tmp_path / "r.db").exists() or "j" not in run(
        "batches", "--store", store(tmp_path))[1]


def test_report_with_labels_and_min_kappa_gates_the_page(tmp_path: Path,
                                                         batch: dict[str, bool]) -> None:
    """``report --labels --min-kappa``: a passing batch whose noisy judge is at chance gets a
    failed header naming the κ gate, and the chance caveat; ``--min-kappa`` needs labels."""
    labels = labels_file(tmp_path / "labels.jsonl", batch)
    target = tmp_path / "r.html"
    code, _, err = run("report", "b", "--labels", str(labels), "--store", store(tmp_path),
                       "-o", str(target), "--min-kappa", "0.6")
    assert code == 0, err
    page = target.read_text()
    header = page[:page.index("</header>")]
    assert '<span class="verdict failed" id="verdict">failed</span>' in header
    assert "verdict: failed — noisy: kappa 0.000, interval&#x27;s lower end -0." in header
    assert ("noisy: agreement with your labels is at chance level: do not gate on this judge"
            in header)
    code, _, err = run("report", "b", "--store", store(tmp_path), "--min-kappa", "0.6")
    assert code == 2
    assert "give --labels FILE" in err


def test_every_bad_label_is_named_with_the_flag_to_change(tmp_path: Path,
                                                          batch: dict[str, bool]) -> None:
    """Bad lines in the file: each one named (not the first only); labels that do not fit
    the options: each item named, with the command line's flag (``--label-value``,
    ``--kind``), not the Python argument alone."""
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "item-0"}\n{"id": "item-1", "label": true}\n{"label": 1}\nnope\n')
    code, _, err = run("calibrate", "b", "--labels", str(path), "--store", store(tmp_path))
    assert code == 2
    assert [line.removeprefix("scorecore: error: ").split(": ", 1)[-1]
            for line in err.splitlines()] == [
        "field 'label' is missing", "field 'id' is missing",
        "invalid JSON: Expecting value (column 1)"]
    assert [f"{path}:{n}:" in err for n in (1, 3, 4)] == [True, True, True]
    path.write_text('{"id": "item-0", "label": "yes"}\n{"id": "item-1", "label": 0.5}\n'
                    '{"id": "item-2", "label": "no"}\n')
    code, _, err = run("calibrate", "b", "--labels", str(path), "--store", store(tmp_path))
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 3
    assert "item 'item-0' is a string without a value in label_values / --label-value" in lines[0]
    assert "item 'item-1' must be true/false or 1/0 for binary labels" in lines[1]
    assert "--kind" in lines[1]
    assert "item 'item-2'" in lines[2]


PANEL_SCORERS = '''
from scorecore import create_scorer
from scorecore.scorers import panel

def member(name, key):
    return create_scorer(id=name, description="d").generate_score(
        lambda ctx: float(ctx.run.extra[key]))

jury = panel([member("supported", "s"), member("coin", "n")], id="grounded-jury")
'''


def test_calibrate_reaches_a_panel_member(tmp_path: Path, batch: dict[str, bool]) -> None:
    """``--scorer grounded-jury/supported`` calibrates one judge of a jury from the panel's
    rows; an unknown member is a usage error listing the members there are."""
    (tmp_path / "panel_scorers.py").write_text(PANEL_SCORERS)
    data = tmp_path / "panel.jsonl"
    data.write_text("".join(
        json.dumps({"id": item, "input": i, "output": i,
                    "extra": {"s": 0.9 if label else 0.1, "n": 0.9 if i % 4 < 2 else 0.1}})
        + "\n" for i, (item, label) in enumerate(batch.items())))
    code, _, err = run("eval", str(tmp_path / "panel_scorers.py"), "--data", str(data),
                       "--store", store(tmp_path), "--batch-id", "p")
    assert code == 0, err
    labels = labels_file(tmp_path / "labels.jsonl", batch)
    code, out, err = run("calibrate", "p", "--labels", str(labels), "--store", store(tmp_path),
                         "--scorer", "grounded-jury/supported", "--scorer",
                         "grounded-jury/coin")
    assert code == 0, err
    assert re.search(r"^grounded-jury/supported +60 +>= 0\.5 +1\.000 \[1\.000, 1\.000\]", out,
                     re.MULTILINE), out
    assert re.search(r"^grounded-jury/coin +60 +>= 0\.5 +0\.000 ", out, re.MULTILINE), out
    code, _, err = run("calibrate", "p", "--labels", str(labels), "--store", store(tmp_path),
                       "--scorer", "grounded-jury/nope")
    assert code == 2
    assert ("no rows of scorer(s) 'grounded-jury/nope' (the rows' scorers: grounded-jury; "
            "panel members: grounded-jury/coin, grounded-jury/supported)") in err


def test_an_anti_correlated_judge_gets_no_fitted_threshold(tmp_path: Path,
                                                           batch: dict[str, bool]) -> None:
    """Scores that run against the labels: the fitted column is "-" and a line says why,
    never "0 (kappa 0.000)"."""
    flipped = labels_file(tmp_path / "flipped.jsonl", {k: not v for k, v in batch.items()})
    code, out, err = run("calibrate", "b", "--labels", str(flipped), "--store",
                         store(tmp_path), "--scorer", "judge")
    assert code == 0, err
    assert "(kappa 0.000)" not in out
    assert re.search(r"^judge +60 +>= 0\.5 +-1\.000 .* -$", out, re.MULTILINE), out
    assert ("judge: no fitted threshold: no cut agrees with the labels better than chance "
            "(the best kappa is 0.000)") in out

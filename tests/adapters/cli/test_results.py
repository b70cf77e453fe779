"""The commands that show results: eval's failure causes, show, batches, compare, report."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from scorecore_adapters.cli import main
from tests.cli_runs import run

SCORERS = '''
from scorecore import create_scorer, not_scorable

# The system's answer carries the simulated outcome: two batches of the same cases differ in
# their outputs only, as two versions of an agent would (compare pairs items by their case).
def _value(ctx):
    if ctx.run.output.get("boom"):
        raise RuntimeError(ctx.run.output["boom"])
    if ctx.run.output.get("skip"):
        return not_scorable(ctx.run.output["skip"])
    return float(ctx.run.output["s"])

quality = create_scorer(id="quality", description="d").analyze(_value).generate_score(
    lambda ctx: ctx.results.analyze_step_result)
length = create_scorer(id="length", description="d").generate_score(lambda ctx: 1.0)
'''

LONG = "upstream said: " + "x" * 300 + " END-OF-CAUSE"


def dataset(
    path: Path, scores: list[float], extra: dict[int, dict[str, str]] | None = None
) -> Path:
    lines = []
    for i, score in enumerate(scores):
        fields: dict[str, object] = {"s": score, **(extra or {}).get(i, {})}
        lines.append(json.dumps({"id": f"item-{i}", "input": i, "output": fields}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def scorers(tmp_path: Path) -> Path:
    path = tmp_path / "results_scorers.py"
    path.write_text(SCORERS)
    return path


def evaluate(tmp_path: Path, scorers: Path, batch: str, scores: list[float],
             extra: dict[int, dict[str, str]] | None = None, *more: str) -> tuple[int, str]:
    data = dataset(tmp_path / f"{batch}.jsonl", scores, extra)
    code, out, err = run("eval", str(scorers), "--data", str(data), "--store",
                         f"sqlite:{tmp_path / 'r.db'}", "--batch-id", batch, *more)
    assert code in (0, 1), err
    return code, out


def store(tmp_path: Path) -> str:
    return f"sqlite:{tmp_path / 'r.db'}"


def test_eval_ends_with_grouped_failure_causes(tmp_path: Path, scorers: Path) -> None:
    """eval lists the top causes: count, scorer, kind and step, a few item ids, the full cause."""
    extra = {i: {"boom": LONG} for i in range(5)} | {7: {"boom": "other"}}
    report = tmp_path / "report.json"
    _, out = evaluate(tmp_path, scorers, "b1", [1.0] * 10, extra, "--output", str(report))
    assert "top failure causes (6 failed scorer run(s) in 2 group(s)):" in out
    assert re.search(r"^ +5 x raised RuntimeError at analyze in quality "
                     r"\(items item-0, item-1, item-2, …\)$", out, re.MULTILINE), out
    assert f"step raised RuntimeError: {LONG}\n" in out  # never truncated
    assert "1 x raised RuntimeError at analyze in quality (items item-7)" in out
    causes = json.loads(report.read_text())["failureCauses"]
    assert causes[0] == {"kind": "raised RuntimeError", "step": "analyze",
                         "message": f"step raised RuntimeError: {LONG}", "count": 5,
                         "scorerIds": ["quality"], "itemIds": ["item-0", "item-1", "item-2"]}


def test_eval_without_failures_prints_no_causes(tmp_path: Path, scorers: Path) -> None:
    """A batch without failures prints no cause section."""
    _, out = evaluate(tmp_path, scorers, "b1", [1.0] * 3)
    assert "failure causes" not in out


def test_eval_lists_at_most_five_groups_and_points_to_show(tmp_path: Path, scorers: Path) -> None:
    """More than five groups: the five largest, then how to see every failure."""
    extra = {i: {"boom": f"cause {i}"} for i in range(7)}
    _, out = evaluate(tmp_path, scorers, "b1", [1.0] * 7, extra)
    assert len(re.findall(r"^ +1 x raised RuntimeError at analyze in quality", out,
                          re.MULTILINE)) == 5
    assert "… 2 more group(s); every failure: scorecore show b1 --failures" in out


def test_show_failures_prints_every_full_cause(tmp_path: Path, scorers: Path) -> None:
    """show --failures prints each failed run with its whole cause; the table cuts only values."""
    extra = {1: {"boom": LONG}, 2: {"skip": "no reference"}}
    evaluate(tmp_path, scorers, "b1", [1.0] * 3, extra)
    code, out, _ = run("show", "b1", "--store", store(tmp_path), "--failures")
    assert code == 0
    assert out == (f"item-1  quality  raised RuntimeError at analyze\n"
                   f"    step raised RuntimeError: {LONG}\n1 failed of 6 rows\n")
    code, out, _ = run("show", "b1", "--store", store(tmp_path))
    # The table shows the cause, not the "scorer 'x' failed at step" prefix.
    assert re.search(r"item-1 +quality +failed +- +step raised RuntimeError: upstream", out)
    assert "scorer 'quality' failed" not in out
    assert "no reference" in out


def test_show_json_is_complete(tmp_path: Path, scorers: Path) -> None:
    """show --json gives every row with its cause, the counts and the grouped causes."""
    evaluate(tmp_path, scorers, "b1", [0.5, 1.0], {0: {"boom": LONG}})
    code, out, _ = run("show", "b1", "--store", store(tmp_path), "--json")
    document = json.loads(out)
    assert code == 0
    assert document["counts"] == {"failed": 1, "scored": 3}
    failed = [r for r in document["rows"] if r["status"] == "failed"]
    assert failed == [{"itemId": "item-0", "runId": "b1:item-0", "scorerId": "quality",
                       "status": "failed", "score": None, "reason": None,
                       "cause": {"kind": "raised RuntimeError", "step": "analyze",
                                 "message": f"step raised RuntimeError: {LONG}"}}]
    assert document["failureCauses"][0]["count"] == 1
    code, out, _ = run("show", "b1", "--store", store(tmp_path), "--json", "--failures")
    assert [r["itemId"] for r in json.loads(out)["rows"]] == ["item-0"]


def test_batches_lists_each_batch_with_counts(tmp_path: Path, scorers: Path) -> None:
    """batches: one line per batch, oldest first, with items, scorers and status counts."""
    evaluate(tmp_path, scorers, "first", [1.0, 1.0], {1: {"skip": "n/a"}})
    evaluate(tmp_path, scorers, "second", [1.0, 1.0, 1.0], {2: {"boom": "x"}})
    code, out, _ = run("batches", "--store", store(tmp_path))
    assert code == 0
    lines = out.splitlines()
    assert re.match(r"first +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +2 +length, quality +3 +1 +0$",
                    lines[1]), out
    assert re.match(r"second +\S+ \S+ +3 +length, quality +5 +0 +1$", lines[2]), out
    assert lines[-1].startswith("2 batch(es) in sqlite:")
    code, out, _ = run("batches", "--store", store(tmp_path), "--json")
    listed = json.loads(out)["batches"]
    assert [(b["batchId"], b["items"], b["scored"], b["notScorable"], b["failed"])
            for b in listed] == [("first", 2, 3, 1, 0), ("second", 3, 5, 0, 1)]
    assert listed[0]["scorers"] == ["length", "quality"]


def test_batches_of_a_missing_store_is_a_usage_error(tmp_path: Path) -> None:
    """batches against a SQLite file that does not exist: exit 2, nothing created."""
    code, _, err = run("batches", "--store", f"sqlite:{tmp_path / 'none.db'}")
    assert code == 2
    assert "does not exist" in err
    assert not (tmp_path / "none.db").exists()


def test_compare_exits_one_on_a_significant_regression(tmp_path: Path, scorers: Path) -> None:
    """compare: a large drop on 40 items exits 1 and names the most regressed items."""
    evaluate(tmp_path, scorers, "base", [1.0] * 40)
    evaluate(tmp_path, scorers, "new", [1.0] * 20 + [0.0] * 20)
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path))
    assert code == 1, out
    assert re.search(r"^quality +40 +1\.000 +0\.500 +-0\.500 +\[-0\.\d+, -0\.\d+\] +"
                     r"0\.\d+ +100\.0% -> 50\.0% +\S+ +0/20/20 +REGRESSED$", out, re.MULTILINE), out
    assert re.search(r"^length +40 .* unchanged$", out, re.MULTILINE), out
    assert "quality: most regressed items:\n  item-20: 1.000 (scored) -> 0.000 (scored)" in out
    assert out.endswith("verdict: regressed\n")
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path), "--json")
    document = json.loads(out)
    assert (code, document["exitCode"], document["regressed"]) == (1, 1, True)
    quality = next(s for s in document["scorers"] if s["id"] == "quality")
    assert (quality["newlyFailing"], quality["newlyPassing"]) == (20, 0)
    assert quality["mcnemarP"] == pytest.approx(2 / 2**20)


def test_compare_same_data_exits_zero(tmp_path: Path, scorers: Path) -> None:
    """The same scores twice: no regression, exit 0; a drop within the tolerance is ignored."""
    evaluate(tmp_path, scorers, "base", [0.8] * 30)
    evaluate(tmp_path, scorers, "same", [0.8] * 30)
    evaluate(tmp_path, scorers, "tiny", [0.79] * 30)
    code, out, _ = run("compare", "base", "same", "--store", store(tmp_path))
    assert (code, out.splitlines()[-1]) == (0, "verdict: no significant regression")
    code, _, _ = run("compare", "base", "tiny", "--store", store(tmp_path))
    assert code == 0
    code, _, _ = run("compare", "base", "tiny", "--store", store(tmp_path), "--tolerance", "0")
    assert code == 1


def test_compare_lists_items_in_one_batch_only(tmp_path: Path, scorers: Path) -> None:
    """Items present in one batch only are listed, not silently dropped."""
    evaluate(tmp_path, scorers, "base", [1.0] * 10)  # 10 pairs: enough for a verdict
    evaluate(tmp_path, scorers, "new", [1.0] * 12)
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path))
    assert code == 0
    assert "items only in new: item-10, item-11" in out


def test_compare_lists_scorers_of_one_batch_and_refuses_them_only_when_required(
    tmp_path: Path, scorers: Path
) -> None:
    """A scorer only one batch ran is listed and the common ones compared (exit 0);
    --require-same-scorers refuses instead (exit 2)."""
    evaluate(tmp_path, scorers, "base", [1.0] * 10)
    data = dataset(tmp_path / "n.jsonl", [1.0] * 10)
    run("eval", f"{scorers}:quality", "--data", str(data), "--store", store(tmp_path),
        "--batch-id", "new")
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path))
    assert code == 0, out
    assert "scorers differ: only in base: length" in out
    code, _, err = run("compare", "base", "new", "--store", store(tmp_path),
                       "--require-same-scorers")
    assert code == 2
    assert ("the batches ran different scorers (only in base: length) and "
            "--require-same-scorers was given") in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "base", "nope"], "no rows for batch 'nope'"),
        (["compare", "base", "base", "--tolerance", "-1"], "expected a finite number >= 0"),
        (["compare", "base", "base", "--threshold", "zzz=0.5"], "not in both batches: zzz"),
        (["report", "nope"], "no rows for batch 'nope'"),
    ],
)
def test_usage_errors(tmp_path: Path, scorers: Path, argv: list[str], message: str) -> None:
    """Unknown batches and bad options are one-line usage errors (exit 2)."""
    evaluate(tmp_path, scorers, "base", [1.0])
    code, _, err = run(*argv, "--store", store(tmp_path))
    assert code == 2
    assert message in err
    assert err.count("\n") == 1


def test_report_writes_one_html_file(tmp_path: Path, scorers: Path) -> None:
    """report -o writes a self-contained page naming the batch, with the baseline compared."""
    evaluate(tmp_path, scorers, "base", [1.0] * 10)
    evaluate(tmp_path, scorers, "new", [0.0] * 10, {0: {"boom": LONG}})
    target = tmp_path / "out" / "r.html"
    target.parent.mkdir()
    code, out, _ = run("report", "new", "--baseline", "base", "--store", store(tmp_path),
                       "-o", str(target), "--threshold", "quality=0.5")
    assert code == 0
    assert f"written to {target}" in out
    page = target.read_text()
    assert "<title>scorecore report: new</title>" in page
    assert 'id="comparison"' in page
    assert f"step raised RuntimeError: {LONG}" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


TARGET = """
def answer(item):
    if item.input == 1:
        raise ConnectionError("model endpoint timed out")
    return item.output
"""


def test_one_cause_across_scorers_is_one_group(tmp_path: Path, scorers: Path) -> None:
    """A raising target fails every scorer of its item: one group naming the scorers."""
    (tmp_path / "agent.py").write_text(TARGET)
    data = dataset(tmp_path / "d.jsonl", [1.0, 1.0, 1.0])
    code, out, err = run("eval", str(scorers), "--data", str(data), "--store", store(tmp_path),
                         "--target", f"{tmp_path / 'agent.py'}:answer")
    assert code == 1, err  # two failed runs: beyond the default --max-failures 0
    assert ("      2 x target raised in length, quality (items item-1)\n"
            "          target raised ConnectionError: model endpoint timed out\n") in out


def _changed_batches(tmp_path: Path, scorers: Path) -> None:
    """Batches base and new of 10 items; new ran another definition of the scorer length."""
    evaluate(tmp_path, scorers, "base", [1.0] * 10)
    changed = tmp_path / "changed_scorers.py"
    changed.write_text(SCORERS.replace("lambda ctx: 1.0)", "lambda ctx: min(1.0, 2.0))"))
    data = dataset(tmp_path / "n.jsonl", [1.0] * 10)
    code, _, err = run("eval", str(changed), "--data", str(data), "--store", store(tmp_path),
                       "--batch-id", "new")
    assert code == 0, err


def test_compare_compares_a_changed_scorer_and_marks_it(tmp_path: Path, scorers: Path) -> None:
    """"I changed my scorer": compared by default and marked "definition changed" in the table,
    the text and the JSON; --require-same-scorers is the strict form (exit 2)."""
    _changed_batches(tmp_path, scorers)
    code, out, err = run("compare", "base", "new", "--store", store(tmp_path))
    assert (code, err) == (0, ""), out
    assert re.search(r"^length \(definition changed\) +10 +1\.000 +1\.000 .* unchanged$", out,
                     re.MULTILINE), out
    assert re.search(r"^quality +10 ", out, re.MULTILINE), out
    assert "scorers differ: definition changed: length" in out
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path), "--json")
    document = json.loads(out)
    assert (code, document["changedScorers"]) == (0, ["length"])
    assert {s["id"]: s["definitionChanged"] for s in document["scorers"]} == {
        "length": True, "quality": False}
    code, _, err = run("compare", "base", "new", "--store", store(tmp_path),
                       "--require-same-scorers")
    assert code == 2
    assert "(definition changed: length)" in err
    assert err.count("\n") == 1


def test_report_baseline_follows_the_same_rule(tmp_path: Path, scorers: Path) -> None:
    """report --baseline marks the changed scorer in its comparison; --require-same-scorers
    refuses the pair there too."""
    _changed_batches(tmp_path, scorers)
    target = tmp_path / "r.html"
    code, _, _ = run("report", "new", "--baseline", "base", "--store", store(tmp_path),
                     "-o", str(target))
    assert code == 0
    page = target.read_text()
    assert re.search(r"<td>length <span class=\"changed\">definition changed</span></td>", page)
    assert "definition changed: length" in page
    code, _, err = run("report", "new", "--baseline", "base", "--store", store(tmp_path),
                       "-o", str(target), "--require-same-scorers")
    assert code == 2
    assert "(definition changed: length)" in err


class _Terminal(io.StringIO):
    """An output that says it is a terminal, so the commands print rich tables."""

    def isatty(self) -> bool:
        return True


def test_show_on_a_terminal_prints_markup_like_text_as_it_is(
    tmp_path: Path, scorers: Path
) -> None:
    """A reason or item id holding "[/INST]" or "[bold]" is text, not rich markup."""
    extra = {0: {"skip": "prompt ended with [/INST] and [bold]x"}}
    data = tmp_path / "m.jsonl"
    data.write_text(json.dumps({"id": "[red]q[/]", "input": 0,
                                "output": {"s": 1.0, **extra[0]}}) + "\n")
    code, _, err = run("eval", str(scorers), "--data", str(data), "--store", store(tmp_path),
                       "--batch-id", "m")
    assert code in (0, 1), err
    out, errors = _Terminal(), io.StringIO()
    code = main(["show", "m", "--store", store(tmp_path)], out=out, err=errors)
    assert code == 0, errors.getvalue()
    text = re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()))
    assert "[/INST]" in text
    assert "[red]q[/]" in text


def test_compare_of_too_few_paired_items_has_no_verdict(tmp_path: Path, scorers: Path) -> None:
    """1 paired item (or 0) gives no verdict: its own exit code 3 and one line saying why,
    never "no significant regression"; --min-paired N sets the minimum."""
    evaluate(tmp_path, scorers, "base", [1.0])
    evaluate(tmp_path, scorers, "new", [0.5])
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path))
    assert code == 3, out
    assert out.splitlines()[-1] == ("verdict: not enough paired items: n=1 for length, "
                                    "n=1 for quality (at least 10 needed; --min-paired N)")
    assert re.search(r"^quality +1 +1\.000 +0\.500 +-0\.500 +- +.* too few pairs$", out,
                     re.MULTILINE), out
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path), "--json")
    document = json.loads(out)
    assert (code, document["exitCode"], document["verdict"]) == (3, 3, "not_enough_pairs")
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path), "--min-paired", "1")
    assert code == 1, out  # one item that lost half its score, if you insist
    lines = [json.dumps({"id": f"other-{i}", "input": i, "output": {"s": 1.0}})
             for i in range(12)]
    (tmp_path / "other.jsonl").write_text("\n".join(lines) + "\n")
    run("eval", str(scorers), "--data", str(tmp_path / "other.jsonl"), "--store",
        store(tmp_path), "--batch-id", "other")
    code, out, _ = run("compare", "base", "other", "--store", store(tmp_path))
    assert code == 3
    assert "verdict: not enough paired items: n=0 for length" in out


def test_compare_without_a_common_scorer_says_so_in_a_closed_sentence(
    tmp_path: Path, scorers: Path
) -> None:
    """Batches that ran no scorer in common: no verdict, and the line closes its parenthesis."""
    for batch, scorer in (("base", "length"), ("new", "quality")):
        data = dataset(tmp_path / f"{batch}.jsonl", [1.0] * 3)
        code, _, err = run("eval", f"{scorers}:{scorer}", "--data", str(data), "--store",
                           store(tmp_path), "--batch-id", batch)
        assert code == 0, err
    code, out, _ = run("compare", "base", "new", "--store", store(tmp_path))
    assert code == 3, out
    assert out.splitlines()[-1] == (
        "verdict: not enough paired items: n=0 (no scorer in both batches)")


def test_compare_min_paired_must_be_positive(tmp_path: Path, scorers: Path) -> None:
    """--min-paired 0 is a usage error naming the value."""
    evaluate(tmp_path, scorers, "base", [1.0])
    code, _, err = run("compare", "base", "base", "--store", store(tmp_path), "--min-paired", "0")
    assert code == 2
    assert "--min-paired: expected an integer >= 1, got '0'" in err


def test_report_threshold_for_an_unknown_scorer_is_a_usage_error(
    tmp_path: Path, scorers: Path
) -> None:
    """report --threshold UNKNOWN=0.5 used to exit 0 silently: exit 2, naming it and listing
    the batch's scorer ids; compare's message lists them too."""
    evaluate(tmp_path, scorers, "base", [1.0] * 10)
    target = tmp_path / "r.html"
    code, _, err = run("report", "base", "--store", store(tmp_path), "-o", str(target),
                       "--threshold", "UNKNOWN=0.5")
    assert code == 2
    assert err == ("scorecore: error: --threshold for scorer 'UNKNOWN', which batch 'base' "
                   "did not run; its scorers: length, quality\n")
    assert not target.exists()
    code, _, err = run("compare", "base", "base", "--store", store(tmp_path),
                       "--threshold", "UNKNOWN=0.5")
    assert code == 2
    assert err == ("scorecore: error: --threshold for scorer(s) not in both batches: UNKNOWN; "
                   "scorers in both: length, quality\n")


def test_report_carries_the_stored_batchs_verdict_and_reason(
    tmp_path: Path, scorers: Path
) -> None:
    """The page of a stored batch whose scorer failed on every item says why it failed, as
    eval did; report's --max-failures relaxes the budget as eval's does."""
    code, out = evaluate(tmp_path, scorers, "b1", [1.0] * 3,
                         {i: {"boom": "down"} for i in range(3)})
    assert code == 1
    target = tmp_path / "r.html"
    code, _, _ = run("report", "b1", "--store", store(tmp_path), "-o", str(target))
    assert code == 0
    page = target.read_text()
    reason = out.splitlines()[-1].removeprefix("verdict: failed — ").replace("'", "&#x27;")
    assert f'<p id="verdict-reason">verdict: failed — {reason}</p>' in page
    assert "scorer &#x27;quality&#x27; has no scored run (3 failed)" in page
    code, _, _ = run("report", "b1", "--store", store(tmp_path), "-o", str(target),
                     "--max-failures", "3")
    assert code == 0
    assert ('id="verdict-reason">verdict: failed — scorer &#x27;quality&#x27; has no scored run '
            '(3 failed)</p>') in target.read_text()

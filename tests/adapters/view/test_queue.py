"""The review queue (least certain first, then a random sample, each run's reasons kept) and
the agreement ledger (the random stratum's κ, as calibrate computes it on the export)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio

from scorecore.evals import ScoreRow, compare
from scorecore_adapters.cli import main
from scorecore_adapters.view import Label, LabelStore, agreement_ledger, review_queue
from tests.adapters.view.stores import rows, store_with


def _row(item: str, score: float, **metadata: object) -> ScoreRow:
    return ScoreRow(id=item, scorer_id="s", run_id=f"b:{item}", batch_id="b", status="scored",
                    score=score, dataset_item_id=item, metadata={"itemIndex": 0, **metadata})


def test_the_least_certain_runs_come_first_then_the_random_sample() -> None:
    """A regression, then a panel that disagreed, a position-biased pair, a score near the
    mark; then the sample; confident runs outside the sample are not queued."""
    batch = [
        _row("near", 0.55), _row("panel", 0.9, panel={"agreed": False}),
        _row("biased", 1.0, pairwise={"outcome": "position_bias"}),
        _row("regressed", 0.0), *(_row(f"sure-{i}", 1.0) for i in range(30)),
    ]
    base = [ScoreRow(id=f"base-{r.id}", scorer_id="s", run_id=f"a:{r.dataset_item_id}",
                     batch_id="a", status="scored", score=1.0 if r.id == "regressed" else
                     r.score, dataset_item_id=r.dataset_item_id) for r in batch]
    comparison = compare(base, batch, most_regressed=1000)
    queue = review_queue(batch, comparison=comparison, sample=5, seed=1)
    assert [e.item_id for e in queue[:4]] == ["regressed", "panel", "biased", "near"]
    assert queue[0].reasons[0] == "regression"
    sampled = [e for e in queue if "random" in e.reasons]
    assert len(sampled) == 5
    assert all(e.reasons == ("random",) for e in queue[4:])
    assert len(queue) == 4 + len([e for e in sampled if e not in queue[:4]])


def test_the_sample_is_uniform_and_seeded() -> None:
    """The same seed draws the same runs; another seed others; every run can be drawn."""
    batch = [_row(f"i{i}", 1.0) for i in range(40)]
    first = [e.item_id for e in review_queue(batch, sample=10, seed=3)]
    assert first == [e.item_id for e in review_queue(batch, sample=10, seed=3)]
    assert first != [e.item_id for e in review_queue(batch, sample=10, seed=4)]
    drawn = {e.item_id for seed in range(60) for e in review_queue(batch, sample=10, seed=seed)}
    assert drawn == {f"i{i}" for i in range(40)}


def test_the_ledger_counts_the_random_stratum_only() -> None:
    """Labels of uncertain runs do not move κ; they are counted apart."""
    batch = [_row(str(i), float(i % 2)) for i in range(20)]
    agree = [Label(batch_id="b", item_id=str(i), scorer_id="s", value=i % 2 == 1,
                   queued=("random",)) for i in range(10)]
    disagree = [Label(batch_id="b", item_id=str(i), scorer_id="s", value=i % 2 == 0,
                      queued=("near_threshold",)) for i in range(10, 20)]
    (line,) = agreement_ledger(batch, agree + disagree)
    assert line.estimate is not None
    assert line.estimate.value == 1.0
    assert (line.labels, line.all_labels) == (10, 20)


def test_more_labels_needed_shrinks_as_labels_arrive() -> None:
    """The labels still needed for ±0.1 fall as random labels are added."""
    batch = [_row(str(i), float(i % 3 != 0)) for i in range(200)]

    def needed(n: int) -> int | None:
        labels = [Label(batch_id="b", item_id=str(i), scorer_id="s",
                        value=(i % 3 != 0) != (i % 7 == 0), queued=("random",))
                  for i in range(n)]
        (line,) = agreement_ledger(batch, labels)
        return line.more_needed

    few, many = needed(30), needed(150)
    assert few is not None
    assert many is not None
    assert few > many


def test_the_ledger_equals_calibrate_on_the_exported_random_stratum(tmp_path: Path) -> None:
    """labels export --stratum random --scorer judge, then calibrate --labels FILE: the κ and
    interval the ledger shows."""
    batch = rows("b1", 60)
    url = store_with(tmp_path / "s.db", batch)
    labels = [Label(batch_id="b1", item_id=f"item-{i:03d}", scorer_id="judge",
                    value=((i * 37) % 100 >= 50) != (i % 5 == 0),
                    queued=("random",) if i % 2 else ("near_threshold",))
              for i in range(60) if i % 10 != 9]

    async def save() -> None:
        async with LabelStore(url) as store:
            await store.add(labels)

    anyio.run(save)
    line = next(x for x in agreement_ledger(batch, labels) if x.scorer_id == "judge")
    exported = tmp_path / "random.jsonl"
    out, err = io.StringIO(), io.StringIO()
    assert main(["labels", "export", "--store", url, "--batch", "b1", "--scorer", "judge",
                 "--stratum", "random", "-o", str(exported)], out=out, err=err) == 0, err
    out = io.StringIO()
    assert main(["calibrate", "b1", "--store", url, "--labels", str(exported), "--scorer",
                 "judge", "--json"], out=out, err=err) == 0, err.getvalue()
    kappa = json.loads(out.getvalue())["scorers"][0]["kappa"]
    assert line.estimate is not None
    assert (kappa["value"], kappa["low"], kappa["high"]) == (
        line.estimate.value, line.estimate.low, line.estimate.high)
    assert line.labels == json.loads(out.getvalue())["scorers"][0]["n"]


def _unsure(item: str, tiers: list[float | None]) -> ScoreRow:
    cascade = {"tier": None, "scorerIds": [f"tier{n}" for n in range(len(tiers))],
               "scores": [0.5] * len(tiers), "confidences": tiers, "minConfidence": 0.8,
               "costs": [0.001] * len(tiers)}
    return ScoreRow(id=item, scorer_id="s", run_id=f"b:{item}", batch_id="b",
                    status="not_scorable", dataset_item_id=item, metadata={
                        "itemIndex": 0, "cascade": cascade, "notScorable": {
                            "kind": "low_confidence", "message": "no tier was sure"}})


def test_a_run_no_cascade_tier_was_sure_of_is_queued_with_its_own_reason() -> None:
    """Not scorable with kind low_confidence: queued after regressions, ahead of panel
    disagreement, with reason "low_confidence"; never in the random sample (not scored)."""
    batch = [_row("panel", 0.9, panel={"agreed": False}), _unsure("unsure", [0.4, 0.6]),
             *(_row(f"sure-{i}", 1.0) for i in range(10))]
    queue = review_queue(batch, sample=100)
    assert [(e.item_id, e.reasons) for e in queue[:2]] == [
        ("unsure", ("low_confidence",)), ("panel", ("panel_disagreement", "random"))]
    assert queue[0].score is None
    assert all(e.item_id != "unsure" for e in queue[2:])
    other = ScoreRow(id="x", scorer_id="s", run_id="b:x", batch_id="b", status="not_scorable",
                     dataset_item_id="x", metadata={"notScorable": {"kind": "empty_output"}})
    assert all(e.item_id != "x" for e in review_queue([*batch, other], sample=100))

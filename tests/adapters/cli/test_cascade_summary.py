"""``scorecore eval``, ``show``, ``calibrate`` and ``report`` show a cascade's tiers."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runs import run

SCORERS = '''
import attrs
from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.judge import JudgeUsage
from scorecore.scorers import cascade
from scorecore_adapters.testing import FunctionJudge, verdict_reply

# Per output: the tier's vote and its probability.
VOTES = {"cheap": {"a": (1, 0.95), "b": (0, 0.9), "c": (1, 0.6), "d": (0, 0.55)},
         "strong": {"a": (1, 0.5), "b": (1, 0.5), "c": (0, 0.99), "d": (1, 0.6)}}


def tier(name):
    def answer(request):
        output = request.messages[-1].content.removeprefix("Pass? ").split("\\n")[0]
        vote, p = VOTES[name][output]
        reply = verdict_reply({"score": vote}, {str(vote): p, str(1 - vote): 1 - p},
                              chosen=str(vote))
        return attrs.evolve(reply, usage=JudgeUsage(input_tokens=1000, output_tokens=0))

    judge = JudgeConfig(model=FunctionJudge(answer, model_id=name), instructions="Judge.")
    return create_scorer(id=name, description="d", judge=judge).generate_score(
        ScorePromptStep(description="pass", create_prompt=lambda ctx: f"Pass? {ctx.run.output}",
                        score_from="probabilities", verdicts={"1": 1.0, "0": 0.0}))


casc = cascade(tier("cheap"), tier("strong"), min_confidence=0.8, id="casc")
'''


def _setup(tmp_path: Path) -> list[str]:
    (tmp_path / "cascade_scorers.py").write_text(SCORERS)
    (tmp_path / "d.jsonl").write_text("".join(
        f'{{"id": "{i}", "input": "q", "output": "{i}"}}\n' for i in "abcd"))
    # $1 per 1,000 input tokens for the cheap tier, $10 for the strong one.
    (tmp_path / "prices.toml").write_text('[models.cheap]\ninput = 1000.0\noutput = 0.0\n'
                                          '[models.strong]\ninput = 10000.0\noutput = 0.0\n')
    (tmp_path / "labels.jsonl").write_text("".join(
        json.dumps({"id": k, "label": v}) + "\n"
        for k, v in {"a": True, "b": True, "c": False, "d": True}.items()))
    return ["--store", f"sqlite:{tmp_path / 'x.db'}"]


def test_eval_and_show_print_each_tiers_share_and_cost_and_with_labels_its_agreement(
    tmp_path: Path,
) -> None:
    """Cheap decides a and b (4 runs paid), strong decides c (2 runs paid), d is low confidence;
    with --labels, each tier's agreement on the runs it decided."""
    store = _setup(tmp_path)
    code, out, err = run("eval", str(tmp_path / "cascade_scorers.py"), "--data",
                         str(tmp_path / "d.jsonl"), *store, "--batch-id", "t", "--no-cache",
                         "--pricing", str(tmp_path / "prices.toml"), "--max-failures", "4",
                         "--labels", str(tmp_path / "labels.jsonl"))
    assert code == 0, err + out
    assert ("cascade casc: 3 of 4 runs decided, 1 low confidence, 0 failed; cost $24.0000"
            in out), out
    assert ("    tier 0 cheap: decided 2 of 4 reaching it (66.7% of decided), cost $4.0000"
            in out), out
    assert ("    tier 1 strong: decided 1 of 2 reaching it (33.3% of decided), cost $20.0000"
            in out), out
    assert ("    tier 0 cheap: decided 2 of 4 reaching it (66.7% of decided), cost $4.0000, "
            "agreement 50.0% over 2 labelled") in out, out
    assert ("    tier 1 strong: decided 1 of 2 reaching it (33.3% of decided), cost $20.0000, "
            "agreement 100.0% over 1 labelled") in out, out
    assert "agreement 66.7% over 3 labelled, 0.02778 per $" in out, out

    shown = run("show", "t", *store)[1]
    assert ("    tier 1 strong: decided 1 of 2 reaching it (33.3% of decided), cost $20.0000"
            in shown), shown
    document = json.loads(run("show", "t", *store, "--json")[1])
    assert [t["decided"] for t in document["cascades"][0]["tiers"]] == [2, 1]

    code, calibrated, err = run("calibrate", "t", *store, "--labels",
                                str(tmp_path / "labels.jsonl"))
    assert code == 0, err + calibrated
    assert "agreement 100.0% over 1 labelled" in calibrated, calibrated

    page = tmp_path / "r.html"
    code, _, err = run("report", "t", *store, "--labels", str(tmp_path / "labels.jsonl"),
                       "-o", str(page))
    assert code == 0, err
    html = page.read_text()
    assert '<section id="cascades">' in html
    assert "<td>1 strong</td><td class=num>2</td><td class=num>1</td>" in html
    assert "100.0% (1)" in html

// Score the trajectory parity cases with the real @mastra/evals (see README.md).
import * as prebuilt from '@mastra/evals/scorers/prebuilt';
import fs from 'fs';

const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
const input = { inputMessages: [], rememberedMessages: [], systemMessages: [], taggedSystemMessages: {} };
for (const c of cases) {
  try {
    const scorer = c.scorer === 'accuracy'
      ? prebuilt.createTrajectoryAccuracyScorerCode(c.options)
      : prebuilt.createTrajectoryScorerCode(c.options);
    const run = { input, output: c.output };
    if (c.expectedTrajectory) run.expectedTrajectory = c.expectedTrajectory;
    const result = await scorer.run(run);
    c.mastra = { score: result.score };
  } catch (e) {
    c.mastra = { error: String(e?.message ?? e) };
  }
}
process.stdout.write(JSON.stringify(cases, null, 0).replace(/\},\{"scorer"/g, '},\n{"scorer"') + '\n');

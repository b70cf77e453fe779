// Score the parity cases with the real @mastra/evals (see README.md).
import * as prebuilt from '@mastra/evals/scorers/prebuilt';
import { checks } from '@mastra/evals/checks';
import fs from 'fs';

const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
const revive = v => (v && typeof v === 'object' && 'regex' in v ? new RegExp(v.regex) : v);
const dates = messages => messages.map(m => ({ ...m, createdAt: new Date(m.createdAt) }));
for (const c of cases) {
  const [name, ...args] = c.scorer;
  const factory = name.startsWith('checks.') ? checks[name.slice(7)] : prebuilt[name];
  try {
    const scorer = factory(...args.map(revive));
    const input = { ...c.input, inputMessages: dates(c.input.inputMessages) };
    const result = await scorer.run({ input, output: dates(c.output) });
    c.mastra = { score: result.score };
    // The informational preprocess values of these two are compared as well.
    if (name === 'createTextualDifferenceScorer' || name === 'createToneScorer') {
      c.mastra.preprocess = result.preprocessStepResult;
    }
  } catch (e) {
    c.mastra = { error: String(e?.message ?? e) };
  }
}
process.stdout.write(JSON.stringify(cases, null, 0).replace(/\},\{"scorer"/g, '},\n{"scorer"') + '\n');

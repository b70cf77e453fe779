// Extract the trajectory of agent messages with the real @mastra/core (see README.md).
import { extractTrajectory } from '@mastra/core/evals';
import fs from 'fs';
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
for (const c of cases) {
  const messages = c.output.map(m => ({ ...m, createdAt: new Date(m.createdAt) }));
  try { const t = extractTrajectory(messages); c.mastra = { steps: t.steps }; }
  catch (e) { c.mastra = { error: String(e?.message ?? e) }; }
}
process.stdout.write(JSON.stringify(cases, null, 0).replace(/\},\{"output"/g, '},\n{"output"') + '\n');

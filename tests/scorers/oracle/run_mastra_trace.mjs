// Extract the trajectory of each trace case with the real @mastra/core (see README.md).
import { extractTrajectoryFromTrace } from '@mastra/core/evals';
import fs from 'fs';

const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
for (const c of cases) {
  const spans = c.spans.map(s => ({
    ...s,
    startedAt: new Date(s.startedAt),
    ...(s.endedAt ? { endedAt: new Date(s.endedAt) } : {}),
  }));
  try {
    c.mastra = extractTrajectoryFromTrace(spans, c.rootSpanId ?? undefined);
  } catch (e) {
    c.mastra = { error: String(e?.message ?? e) };
  }
}
process.stdout.write(JSON.stringify(cases, null, 0).replace(/\},\{"spans"/g, '},\n{"spans"') + '\n');

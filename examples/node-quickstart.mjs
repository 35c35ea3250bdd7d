// A session, a file, a streamed run and an artifact with @drydock/client.
// In this repo: npm run build, then
//   DRYDOCK_URL=http://localhost:8080 DRYDOCK_API_KEY=ddk_… node examples/node-quickstart.mjs
// (an installed package is imported as '@drydock/client').
import { Drydock, isDrydockError } from '../dist/packages/client/src/index.js';

const drydock = new Drydock({ url: process.env.DRYDOCK_URL ?? 'http://localhost:8080', apiKey: process.env.DRYDOCK_API_KEY });
const session = await drydock.sessions.create({ threadId: 'quickstart' });
await session.files.write('/data/numbers.csv', 'n\n1\n2\n3\n');

const run = await session.run(
  [
    'import csv, time',
    'rows = [int(r["n"]) for r in csv.DictReader(open("data/numbers.csv"))]',
    'for n in rows:',
    '    print("row", n, flush=True); time.sleep(0.5)',
    'open("artifacts/total.txt", "w").write(str(sum(rows)))',
    'sum(rows)',
  ].join('\n'),
  { onStdout: (text) => process.stdout.write(text) },
);
console.log('status:', run.status, 'result:', run.result?.text);

const [artifact] = await drydock.artifacts.list({ threadId: 'quickstart', limit: 1 });
console.log('artifact:', artifact.name, new TextDecoder().decode(await drydock.artifacts.download(artifact.id)));
console.log('share:', (await drydock.artifacts.signedUrl(artifact.id, { ttlSeconds: 600 })).url);

try {
  await session.files.readText('/missing.txt');
} catch (error) {
  if (isDrydockError(error, 'FILE_NOT_FOUND')) console.log('as expected:', error.code, error.message);
  else throw error;
}
await session.delete();

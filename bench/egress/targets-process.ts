// The bench's targets in a process of their own (so that serving the download does not
// share the in-process worker's event loop with its proxy): prints their ports and
// certificate as one JSON line, and stops when its stdin closes.
import { startEgressTargets } from '../../test/support/egress-targets.js';

const targets = await startEgressTargets(process.argv[2] ?? 'bench.test');
process.stdout.write(`${JSON.stringify({ httpPort: targets.httpPort, httpsPort: targets.httpsPort, certificatePem: targets.certificatePem })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void targets.close().then(() => process.exit(0)));

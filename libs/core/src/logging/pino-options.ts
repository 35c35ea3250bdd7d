import { pino, type DestinationStream, type LoggerOptions } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { logContext } from './log-context.js';

// Never logged, whatever a log call passes: credentials in request headers, and
// settings or bodies that hold keys, secrets or passwords.
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.apiKey',
  '*.adminKey',
  '*.password',
  '*.signingSecret',
  '*.databaseUrl',
  '*.redisUrl',
  '*.modelApiKey',
];

// One JSON object per line, for the gateway and the worker alike: ISO time, level as a
// word, the service (and the worker's id), and the ids of the request or job at hand.
export function pinoOptions(config: AppConfig, service: 'gateway' | 'worker'): LoggerOptions {
  return {
    level: config.logLevel,
    base: { service, ...(service === 'worker' ? { workerId: config.worker.id } : {}) },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => ({ ...logContext() }),
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}

let destination: DestinationStream | null = null;

// How long a log line may wait in the buffer before it is written.
const FLUSH_EVERY_MS = 100;

type SonicBoom = ReturnType<typeof pino.destination>;

// stdout, written asynchronously (pino's sonic-boom): a log line never holds the event
// loop while the terminal or the file behind stdout is slow. Logging every request
// synchronously cost a fifth of the throughput under load. Lines are gathered up to 4 KiB
// (a write system call per request was ~75 µs of the gateway's CPU) and written at the
// latest FLUSH_EVERY_MS later; pino flushes what is left when the process exits.
export function logDestination(): DestinationStream {
  if (!destination) destination = flushedEvery(pino.destination({ dest: 1, sync: false, minLength: 4096 }), FLUSH_EVERY_MS);
  return destination;
}

// Flushes `boom` every `ms` while it holds lines not yet written, and not otherwise:
// sonic-boom's flush() writes even an empty buffer, so flushing on a plain timer made
// every idle gateway and worker write nothing to stdout ten times a second (with its
// callbacks, an eighth of an idle worker's main-thread time and a third of the gateway's
// in a profile). The bytes handed to it, less the bytes its 'write' events report written,
// say whether anything is waiting.
export function flushedEvery(boom: SonicBoom, ms: number): SonicBoom {
  let unwritten = 0;
  const write = boom.write.bind(boom);
  boom.write = (line: string) => {
    unwritten += Buffer.byteLength(line);
    return write(line);
  };
  boom.on('write', (n: number) => {
    unwritten = Math.max(0, unwritten - n);
  });
  const timer = setInterval(() => {
    if (unwritten > 0) boom.flush();
  }, ms).unref();
  boom.once('close', () => clearInterval(timer));
  return boom;
}

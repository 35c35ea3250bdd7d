import { once } from 'node:events';
import type { Output } from './io.js';

export function printJson(out: Output, value: unknown): void {
  out.write(JSON.stringify(value, null, 2) + '\n');
}

// Honours backpressure so that streaming 100,000 results into a slow pipe does not
// buffer them all in memory.
export async function writeChunk(out: Output, chunk: string | Uint8Array): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

// Left-aligned columns, two spaces apart; the last column is not padded.
export function table(rows: string[][]): string {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

// Seconds as 42s, 3m05s, 2h07m.
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

import { formatBytes, normalizePath } from '@drydock/vfs';

// Small pieces of the tools' model-facing text.

// A path as the model should see it echoed back: normalised when it is valid.
export function shownPath(path: string): string {
  try {
    return normalizePath(path);
  } catch {
    return JSON.stringify(path);
  }
}

export function sizeText(bytes: number): string {
  return bytes === 1 ? '1 byte' : formatBytes(bytes);
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

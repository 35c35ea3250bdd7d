import type { RichResult } from '@drydock/execution';
import type { ExecuteResult } from '../backends/backend-protocol.js';
import type { ToolArtifact, ToolResult } from './tool-artifact.js';
import { sizeText } from './tool-text.js';

// How a Python run reads to the model. Sections come in a fixed order and only when
// they have something to say, each under a one-word header:
//
//   [state lost] ...        the session was re-created; earlier variables are gone
//   stdout:                 what the code printed
//   stderr:                 what it wrote to stderr (warnings included)
//   result:                 the value of the last expression, as repr() shows it
//   error: Name: value      the exception, then its traceback
//   timeout: / memory: / killed:   why the run stopped early, and what to do
//   [output truncated] ...  the output cap dropped the rest
//   files changed: / files deleted:   thread files the run wrote or removed
//   artifacts:              files produced under /session/artifacts/
//
// A successful run with none of these says so in one line. Every status but "ok" is an
// error result (ToolMessage status "error").

// Paths named per list; the rest are counted.
const MAX_NAMED_PATHS = 20;

export const EMPTY_RUN_TEXT = 'The code ran successfully with no output: nothing was printed and the last line has no value.';

export const STATE_LOST_TEXT =
  '[state lost] The Python session was restarted before this run: variables, imports and functions from ' +
  'earlier runs are gone (the thread\'s files are kept). Re-run the code that defines anything this code needs.';

const STATUS_TEXT: Record<string, string> = {
  timeout:
    'timeout: The code ran past its time limit and was stopped; output up to that point is shown above. ' +
    'Make it faster, work on less data, or split the work into smaller runs.',
  memory:
    'memory: The code ran out of memory and the Python process was restarted: variables from earlier runs ' +
    'are gone (the thread\'s files are kept). Use less memory (read data in chunks, drop large objects) and run again.',
  killed:
    'killed: The run was stopped before it finished (its session was stopped or restarted). Run it again; ' +
    'variables from earlier runs may be gone.',
};

export const TRUNCATED_TEXT =
  '[output truncated] The run printed more than the output limit and the rest was dropped. ' +
  'Print less, or write large output to a file and page through it with read_file.';

export function renderExecution(run: ExecuteResult): ToolResult {
  const sections: string[] = [];
  if (run.stateLost) sections.push(STATE_LOST_TEXT);
  const stdout = trimEnd(run.stdout);
  if (stdout) sections.push(`stdout:\n${stdout}`);
  const stderr = trimEnd(run.stderr);
  if (stderr) sections.push(`stderr:\n${stderr}`);
  const result = resultText(run.result);
  if (result !== null) sections.push(`result:\n${result}`);
  if (run.error) sections.push(errorText(run.error.name, run.error.value, run.error.traceback));
  else if (run.status === 'error') sections.push('error: The code raised an exception, but no details were reported.');
  const status = STATUS_TEXT[run.status];
  if (status) sections.push(status);
  if (run.truncated) sections.push(TRUNCATED_TEXT);
  sections.push(...outcomeSections(run));
  const { execution, isError } = executionArtifact(run);
  const text = sections.length > 0 ? sections.join('\n\n') : isError ? `The run ended with status ${run.status}.` : EMPTY_RUN_TEXT;
  return [text, isError ? { isError, execution } : { execution }];
}

function trimEnd(text: string | undefined | null): string {
  return typeof text === 'string' ? text.replace(/\s+$/, '') : '';
}

function errorText(name: string, value: string, traceback: string): string {
  const head = value ? `error: ${name}: ${value}` : `error: ${name}`;
  const tb = trimEnd(traceback);
  return tb ? `${head}\n${tb}` : head;
}

// The value's text as repr() gave it; a value with only a picture or HTML is named.
function resultText(result: RichResult | null | undefined): string | null {
  if (!result || typeof result !== 'object') return null;
  const plain = (result as Record<string, unknown>)['text/plain'];
  const text = typeof result.text === 'string' ? result.text : typeof plain === 'string' ? plain : null;
  if (text !== null) return result.png ? `${text}\n(and a PNG image)` : text;
  if (result.png) return '(a PNG image)';
  if (result.json !== undefined) return JSON.stringify(result.json);
  if (result.html) return '(an HTML value)';
  return null;
}

// What a run (code or a command) did beyond its output: the thread files it changed
// and deleted, and the artifacts it left.
export function outcomeSections(run: Pick<ExecuteResult, 'files' | 'artifacts'>): string[] {
  const sections: string[] = [];
  const changed = run.files?.changed ?? [];
  if (changed.length > 0) sections.push(`files changed: ${pathList(changed)}`);
  const deleted = run.files?.deleted ?? [];
  if (deleted.length > 0) sections.push(`files deleted: ${pathList(deleted)}`);
  const artifacts = artifactsOf(run);
  if (artifacts.length > 0) sections.push(`artifacts:\n${artifacts.map(artifactLine).join('\n')}`);
  return sections;
}

// The tool result's artifact for a run, and whether the run counts as an error.
export function executionArtifact(run: Pick<ExecuteResult, 'status' | 'executionId' | 'artifacts'>): { execution: NonNullable<ToolArtifact['execution']>; isError: boolean } {
  const execution: NonNullable<ToolArtifact['execution']> = { status: run.status };
  if (run.executionId) execution.id = run.executionId;
  const artifacts = artifactsOf(run);
  if (artifacts.length > 0) execution.artifacts = artifacts;
  return { execution, isError: run.status !== 'ok' };
}

function artifactsOf(run: Pick<ExecuteResult, 'artifacts'>): unknown[] {
  return Array.isArray(run.artifacts) ? run.artifacts : [];
}

export function artifactLine(artifact: unknown): string {
  if (!artifact || typeof artifact !== 'object') return `- ${String(artifact)}`;
  const a = artifact as Record<string, unknown>;
  const name = typeof a.path === 'string' ? a.path : typeof a.name === 'string' ? a.name : 'artifact';
  const facts = [
    typeof a.mime === 'string' ? a.mime : typeof a.contentType === 'string' ? a.contentType : null,
    typeof a.size === 'number' ? sizeText(a.size) : null,
  ].filter((x): x is string => x !== null);
  const id = typeof a.id === 'string' ? ` id ${a.id}` : '';
  return `- ${name}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}${id}`;
}

export function pathList(paths: string[]): string {
  const named = paths.slice(0, MAX_NAMED_PATHS).join(', ');
  return paths.length > MAX_NAMED_PATHS ? `${named} and ${paths.length - MAX_NAMED_PATHS} more` : named;
}

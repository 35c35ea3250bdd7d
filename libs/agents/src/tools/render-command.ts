import type { CommandResult } from '../backends/backend-protocol.js';
import { executionArtifact, outcomeSections } from './render-execution.js';
import type { ToolResult } from './tool-artifact.js';

// How a shell command reads to the model: seed 004's `<output>\n\nExit code: N`, with
// what the platform adds only when it has something to say:
//
//   <stdout, then stderr>            "(no output)" when it wrote nothing
//   [output truncated] ...           the output cap dropped the rest
//   Timed out ... / Out of memory ... / Stopped ...   the platform ended it, and what to do
//   Exit code: N                     or "Exit code: none (...)" when there is none
//   files changed: / files deleted:  thread files it wrote or removed
//   artifacts:                       files it left under /session/artifacts/
//
// Every status but "ok" (exit 0) is an error result (ToolMessage status "error").

export const NO_OUTPUT_TEXT = '(no output)';

export const COMMAND_TRUNCATED_TEXT =
  '[output truncated] The command wrote more than the output limit and the rest was dropped. ' +
  'Filter it (grep, head, tail), or redirect it to a file (> out.txt) and page through that with read_file.';

const STOPPED_TEXT: Record<string, (seconds: string) => string> = {
  timeout: (after) =>
    `Timed out${after}: the command ran past its time limit and was stopped, with every process it started; ` +
    'its output up to then is above. Make it faster, work on less data, or split it into shorter commands.',
  memory: () =>
    'Out of memory: the sandbox ran out of memory and the command was killed. ' +
    'Use less memory (smaller inputs, stream instead of loading everything) and run it again.',
  killed: () => 'Stopped: the command was stopped before it finished (the run was cancelled, or its session stopped or restarted).',
};

const NO_EXIT_CODE: Record<string, string> = { timeout: 'timed out', memory: 'out of memory', killed: 'stopped' };

export function renderCommand(run: CommandResult): ToolResult {
  const sections = [run.output.replace(/\s+$/, '') || NO_OUTPUT_TEXT];
  if (run.truncated) sections.push(COMMAND_TRUNCATED_TEXT);
  const stopped = STOPPED_TEXT[run.status];
  if (stopped) sections.push(stopped(typeof run.durationMs === 'number' ? ` after ${(run.durationMs / 1000).toFixed(1)} s` : ''));
  sections.push(`Exit code: ${exitCodeText(run)}`);
  sections.push(...outcomeSections(run));
  const { execution, isError } = executionArtifact(run);
  return [sections.join('\n\n'), isError ? { isError, execution } : { execution }];
}

function exitCodeText(run: CommandResult): string {
  if (typeof run.exitCode === 'number') return String(run.exitCode);
  if (run.signal && !NO_EXIT_CODE[run.status]) return `none (killed by signal ${run.signal})`;
  return `none (${NO_EXIT_CODE[run.status] ?? `the command ended with status ${run.status}`})`;
}

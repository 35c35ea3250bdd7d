import { buildPythonToolCallCode, parsePythonToolCallOutput, type PythonToolCall } from './call-snippet.js';
import { PythonToolError } from './python-tools.errors.js';
import { runReplCells } from './repl-harness.spec-helper.js';
import { sha256OfSource } from './tool-module.js';

const WEATHER_TOOLS = `
import json
import math
from os.path import join
from dataclasses import dataclass
from datetime import date

_loads = []
_loads.append(1)

def _celsius(fahrenheit):
    return round((fahrenheit - 32) * 5 / 9, 1)

@dataclass
class Reading:
    city: str
    when: date

def to_celsius(values: list[float]) -> dict:
    """Convert temperatures."""
    return {"celsius": [_celsius(v) for v in values], "count": len(values)}

def echo(text: str, items: list = [], mapping: dict = {}):
    return {"text": text, "items": items, "mapping": mapping, "length": len(text)}

def load_count():
    return len(_loads)

def fails(reason: str):
    raise ValueError("cannot do it: " + reason)

def odd_values():
    return {"nan": math.nan, "inf": -math.inf, "tuple": (1, 2), "set": {3}, 7: "int key",
            "reading": Reading("Oslo", date(2024, 5, 17))}

async def later(x: int):
    return x * 2
`;

function call(functionName: string, args: Record<string, unknown> = {}, source = WEATHER_TOOLS): PythonToolCall {
  return { source, sha256: sha256OfSource(source), functionName, args };
}

// Runs the calls in one Python process, like successive tool calls in one thread's REPL;
// plain strings are the user's own cells and give no outcome.
function runCalls(...calls: Array<PythonToolCall | string>) {
  const cells = calls.map((c) => (typeof c === 'string' ? c : buildPythonToolCallCode(c)));
  const outcomes = runReplCells(cells).filter((_, i) => typeof calls[i] !== 'string'); // skip user cells
  return outcomes.map((outcome) => {
    if (outcome.error !== undefined || typeof outcome.value !== 'string') {
      throw new Error(`the cell did not produce a value: ${JSON.stringify(outcome)}`);
    }
    return { ...parsePythonToolCallOutput(outcome.value), names: outcome.names };
  });
}

function refusal(fn: () => unknown): PythonToolError {
  try {
    fn();
  } catch (error) {
    return error as PythonToolError;
  }
  throw new Error('expected a refusal');
}

describe(buildPythonToolCallCode.name, () => {
  it('should call a public function that uses a private helper and return its value as JSON', () => {
    const [sut] = runCalls(call('to_celsius', { values: [212, 32] }));
    expect(sut).toMatchObject({ ok: true, result: { celsius: [100, 0], count: 2 } });
  });

  const hostile = [
    'quote " and \' and """ triple """ and \'\'\' triple \'\'\'',
    'backslashes \\ \\\\ \\n \\x00 \\u0041 \\N{BULLET} and a final \\',
    'new\nlines\r\nand\ttabs\u000b\u000c\u0000nul',
    '"); import os; os.system("echo pwned"); ("',
    '\'\'\' + __import__("os").getcwd() + \'\'\'',
    '{json.dumps} {0} %s ${x}',
    'unicode: ünï©ødé 中文 🚀 \u2028 \u2029 \u0085',
  ];

  it.each(hostile)('should pass the argument %j to Python unchanged', (text) => {
    const args = { text, items: [text, { [text]: text }], mapping: { [text]: [text] } };
    const [sut] = runCalls(call('echo', args));
    expect(sut).toMatchObject({ ok: true, result: { ...args, length: [...text].length } });
  });

  it('should keep the generated code ASCII so no character can be read differently', () => {
    const sut = buildPythonToolCallCode(call('echo', { text: hostile.join('') }));
    expect(sut).toMatch(/^[\x20-\x7e\n]*$/);
  });

  it('should load the module once per REPL and leave no names in its namespace', () => {
    const [first, second] = runCalls(call('load_count'), call('load_count'));
    expect(first).toMatchObject({ ok: true, result: 1, names: [] });
    expect(second).toMatchObject({ ok: true, result: 1, names: [] });
  });

  it('should load a changed source as a separate module', () => {
    const changed = WEATHER_TOOLS.replace('_loads.append(1)', '_loads.extend([1, 1])');
    const [original, edited] = runCalls(call('load_count'), call('load_count', {}, changed));
    expect(original).toMatchObject({ ok: true, result: 1 });
    expect(edited).toMatchObject({ ok: true, result: 2 });
  });

  it('should not be disturbed by names the user defined in the REPL', () => {
    const user = 'json = None; str = int; globals = None; types = 1; inspect = None';
    const [sut] = runCalls(user, call('to_celsius', { values: [32] }));
    expect(sut).toMatchObject({ ok: true, result: { celsius: [0], count: 1 } });
    expect(sut.names).toEqual(['globals', 'inspect', 'json', 'str', 'types']);
  });

  it('should await an async function', () => {
    const [sut] = runCalls(call('later', { x: 21 }));
    expect(sut).toMatchObject({ ok: true, result: 42 });
  });

  it('should turn values JSON lacks into JSON (NaN to null, tuples and sets to lists, dates to ISO text)', () => {
    const [sut] = runCalls(call('odd_values'));
    expect(sut).toMatchObject({
      ok: true,
      result: { nan: null, inf: null, tuple: [1, 2], set: [3], '7': 'int key', reading: { city: 'Oslo', when: '2024-05-17' } },
    });
  });

  it('should report an exception raised by the tool with a traceback of the tool code only', () => {
    const [sut] = runCalls(call('fails', { reason: 'no data' }));
    expect(sut).toMatchObject({ ok: false, error: { stage: 'call', type: 'ValueError', message: 'cannot do it: no data' } });
    if (sut.ok) throw new Error('unreachable');
    expect(sut.error.traceback).toContain('raise ValueError("cannot do it: " + reason)');
    expect(sut.error.traceback).not.toContain('function(**kwargs)');
  });

  it.each([
    ['a missing argument', {}],
    ['an unknown argument', { reason: 'x', extra: 1 }],
  ])('should report %s before calling the tool', (_, args) => {
    const [sut] = runCalls(call('fails', args));
    expect(sut).toMatchObject({ ok: false, error: { stage: 'arguments', type: 'TypeError' } });
    if (sut.ok) throw new Error('unreachable');
    expect(sut.error.traceback).toMatch(/^TypeError: .*argument/);
  });

  it.each(['join', 'Reading', 'missing', 'math'])('should refuse %j, which is not a function the module defines', (name) => {
    const [sut] = runCalls(call(name));
    expect(sut).toMatchObject({ ok: false, error: { stage: 'lookup', type: 'LookupError' } });
  });

  it('should report a module that fails to load, and load it again on the next call', () => {
    const source = 'import module_that_does_not_exist\n\ndef f():\n    return 1\n';
    const [first, second] = runCalls(call('f', {}, source), call('f', {}, source));
    for (const sut of [first, second]) {
      expect(sut).toMatchObject({ ok: false, error: { stage: 'load', type: 'ModuleNotFoundError' } });
    }
  });

  it('should refuse a source that does not match its sha256', () => {
    const sut = refusal(() => buildPythonToolCallCode({ ...call('echo'), source: `${WEATHER_TOOLS}#` }));
    expect(sut).toBeInstanceOf(PythonToolError);
    expect(sut.code).toBe('MODULE_HASH_MISMATCH');
  });

  it.each(['_celsius', 'echo; import os', '', 'x'.repeat(65), 'größe'])('should refuse the function name %j', (name) => {
    const sut = refusal(() => buildPythonToolCallCode(call(name)));
    expect(sut).toMatchObject({ code: 'INVALID_TOOL_FUNCTION', status: 400 });
  });

  it.each([
    ['an array', [] as unknown as Record<string, unknown>],
    ['null', null as unknown as Record<string, unknown>],
    ['a BigInt', { n: 1n }],
  ])('should refuse arguments that are %s', (_, args) => {
    const sut = refusal(() => buildPythonToolCallCode(call('echo', args)));
    expect(sut).toMatchObject({ code: 'INVALID_TOOL_ARGUMENTS', status: 400 });
  });
});

describe(parsePythonToolCallOutput.name, () => {
  it.each(['{"ok": true, "result": [1, 2', '"just text"', '{"ok": false, "error": {"stage": "elsewhere"}}'])(
    'should refuse %j, which our code never prints',
    (text) => {
      expect(() => parsePythonToolCallOutput(text)).toThrow(expect.objectContaining({ code: 'INVALID_SANDBOX_OUTPUT' }));
    },
  );
});

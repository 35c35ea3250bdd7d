import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDeriveSchemaCode, deriveSchemaScriptPath, readDeriveSchemaScript } from './derive-schema-script.js';
import { runReplCellJson } from './repl-harness.spec-helper.js';
import { parseDerivedSchemas } from './tool-module.js';

const SAMPLE_MODULE = `
import numpy as np
import module_that_is_not_installed
from typing import Literal, Optional

raise SystemExit("the module body must never run")

def _fetch(city):
    return {"city": city}

def forecast(city: str, days: int = 3, units: Literal["metric", "imperial"] = "metric",
             tags: Optional[list[str]] = None) -> dict:
    """Forecast the weather for a city.

    Uses the internal service.

    Args:
        city: The city's name.
        days: How many days ahead.
    """
    return _fetch(city)

async def mean(values: list[float]) -> float:
    """Mean of the values."""
    return float(np.mean(values))

def everything(*args, **kwargs):
    pass
`;

function runScript(stdin: string) {
  const done = spawnSync('python3', [deriveSchemaScriptPath()], { input: stdin, encoding: 'utf8', timeout: 30_000 });
  return { status: done.status, stdout: done.stdout, stderr: done.stderr };
}

describe(deriveSchemaScriptPath.name, () => {
  it('should find derive_schema.py beside this module when running from source', () => {
    const sut = deriveSchemaScriptPath();
    expect(dirname(sut)).toBe(dirname(fileURLToPath(import.meta.url)));
    expect(readDeriveSchemaScript()).toContain('def derive(source: str)');
  });
});

describe('derive_schema.py', () => {
  it('should print schemas that the TypeScript side reads, without running the module', () => {
    const { status, stdout, stderr } = runScript(JSON.stringify({ source: SAMPLE_MODULE }));
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    const sut = parseDerivedSchemas(stdout);
    expect(sut.functions.map((f) => f.name)).toEqual(['forecast', 'mean']);
    expect(sut.functions[0]).toEqual({
      name: 'forecast',
      description: 'Forecast the weather for a city.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: "The city's name." },
          days: { type: 'integer', description: 'How many days ahead.', default: 3 },
          units: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' },
          tags: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }], default: null },
        },
        required: ['city'],
        additionalProperties: false,
      },
      required: ['city'],
    });
    const line = SAMPLE_MODULE.split('\n').findIndex((text) => text.startsWith('def everything')) + 1;
    expect(sut.errors).toEqual([
      expect.objectContaining({ code: 'VARARGS_NOT_SUPPORTED', function: 'everything', line }),
      expect.objectContaining({ code: 'VARARGS_NOT_SUPPORTED', function: 'everything', line }),
    ]);
  });

  it('should report a syntax error with its line', () => {
    const sut = parseDerivedSchemas(runScript(JSON.stringify({ source: 'x = 1\ndef broken(:\n' })).stdout);
    expect(sut).toEqual({ functions: [], errors: [expect.objectContaining({ code: 'SYNTAX_ERROR', line: 2, function: null })] });
  });
});

describe(buildDeriveSchemaCode.name, () => {
  it('should give in a REPL cell the same result as the script on stdin', () => {
    const fromScript = parseDerivedSchemas(runScript(JSON.stringify({ source: SAMPLE_MODULE })).stdout);
    const sut = parseDerivedSchemas(JSON.stringify(runReplCellJson(buildDeriveSchemaCode(SAMPLE_MODULE))));
    expect(sut).toEqual(fromScript);
  });

  it('should carry a source full of quotes and backslashes intact', () => {
    const source = String.raw`def f(x: str = "\"'''\\\n"):
    """Doc with \""" quotes ''' and a backslash \\ ."""
`;
    const [sut] = parseDerivedSchemas(JSON.stringify(runReplCellJson(buildDeriveSchemaCode(source)))).functions;
    expect(sut.description).toBe(String.raw`Doc with """ quotes ''' and a backslash \ .`);
    expect(sut.parameters.properties.x).toEqual({ type: 'string', default: `"'''\\\n` });
  });
});

describe(parseDerivedSchemas.name, () => {
  it.each([
    ['text that is not JSON', 'Traceback (most recent call last):'],
    ['a tool name a model provider refuses', JSON.stringify({ functions: [{ name: 'größe' }], errors: [] })],
    ['an unknown error code', JSON.stringify({ functions: [], errors: [{ code: 'OOPS', function: null, line: null, message: '' }] })],
  ])('should refuse %s', (_, text) => {
    expect(() => parseDerivedSchemas(text)).toThrow(expect.objectContaining({ code: 'INVALID_SANDBOX_OUTPUT' }));
  });
});

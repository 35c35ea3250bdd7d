import { createHash } from 'node:crypto';
import {
  AGENT_BUNDLE_FORMAT,
  exportAgentBundle,
  importAgentBundle,
  importAgentBundleText,
  serializeAgentBundle,
  type PortableAgent,
} from './agent-bundle.js';
import { canonicalJson } from './canonical-json.js';
import { AgentBundleError } from './python-tools.errors.js';
import { createPythonToolModule, sha256OfSource, type PythonToolSpec } from './tool-module.js';

const WEATHER_SOURCE = `import math

def _celsius(fahrenheit):
    return round((fahrenheit - 32) * 5 / 9, 1)

def to_celsius(values: list[float]) -> list[float]:
    """Convert temperatures from Fahrenheit."""
    return [_celsius(v) for v in values]
`;

function aSpec(name: string): PythonToolSpec {
  return {
    name,
    description: 'Convert temperatures from Fahrenheit.',
    parameters: {
      type: 'object',
      properties: { values: { type: 'array', items: { type: 'number' } } },
      required: ['values'],
      additionalProperties: false,
    },
    required: ['values'],
  };
}

function anAgent(overrides: Partial<PortableAgent> = {}): PortableAgent {
  return {
    name: 'Weather helper',
    instructions: 'Answer questions about the weather. Use "to_celsius" for conversions.\nBe brief.',
    model: 'openai:gpt-4o-mini',
    tools: ['execute_python', 'read_file'],
    backendRoutes: [{ prefix: '/memories/', backend: 'tenant-store' }],
    pythonModules: [createPythonToolModule({ name: 'weather', source: WEATHER_SOURCE, functions: [aSpec('to_celsius')] })],
    ...overrides,
  };
}

// The exported file with the first `from` after `marker` replaced by `to`: one edited
// byte (or a few) in an otherwise intact bundle.
function edited(text: string, marker: string, from: string, to: string): string {
  const at = text.indexOf(from, text.indexOf(marker));
  if (text.indexOf(marker) < 0 || at < 0) throw new Error(`no ${from} after ${marker}`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

function refusal(fn: () => unknown): AgentBundleError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentBundleError) return error;
    throw error;
  }
  throw new Error('expected the bundle to be refused');
}

describe(exportAgentBundle.name, () => {
  it('should hash the canonical JSON of the agent', () => {
    const agent = anAgent();
    const sut = exportAgentBundle(agent);
    expect(sut).toMatchObject({ format: AGENT_BUNDLE_FORMAT, version: 1, agent });
    expect(sut.sha256).toBe(createHash('sha256').update(canonicalJson(agent)).digest('hex'));
  });

  it('should refuse to export a module whose source does not match its sha256', () => {
    const [module] = anAgent().pythonModules;
    const sut = refusal(() => exportAgentBundle(anAgent({ pythonModules: [{ ...module, source: `${module.source}\n` }] })));
    expect(sut).toMatchObject({ code: 'BUNDLE_MODULE_HASH_MISMATCH', status: 422 });
  });
});

describe(importAgentBundle.name, () => {
  it('should round-trip an agent with its modules intact, private helpers included', () => {
    const agent = anAgent();
    const sut = importAgentBundleText(serializeAgentBundle(exportAgentBundle(agent)));
    expect(sut).toEqual(agent);
    expect(sut.pythonModules[0].source).toBe(WEATHER_SOURCE);
    expect(sut.pythonModules[0].source).toContain('def _celsius(fahrenheit):');
    expect(sut.pythonModules[0].sha256).toBe(sha256OfSource(WEATHER_SOURCE));
  });

  it('should keep a filesystem route with its configured root name', () => {
    const backendRoutes: PortableAgent['backendRoutes'] = [
      { prefix: '/datasets/', backend: 'filesystem', root: 'datasets' },
      { prefix: '/memories/', backend: 'tenant-store' },
    ];
    const sut = importAgentBundleText(serializeAgentBundle(exportAgentBundle(anAgent({ backendRoutes }))));
    expect(sut.backendRoutes).toEqual(backendRoutes);
  });

  it('should refuse routes a definition could not have, such as a filesystem route without its root', () => {
    const bundle = exportAgentBundle(anAgent());
    const forged = { ...bundle, agent: { ...bundle.agent, backendRoutes: [{ prefix: '/data/', backend: 'filesystem' }] } };
    expect(refusal(() => importAgentBundle(forged))).toMatchObject({ code: 'BUNDLE_INVALID', status: 400 });
  });

  it('should accept the same bundle saved with other key order and layout', () => {
    const bundle = exportAgentBundle(anAgent());
    const reorder = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reorder)
        : value && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reorder(v)]))
          : value;
    expect(importAgentBundleText(JSON.stringify(reorder(bundle)))).toEqual(anAgent());
  });

  it('should refuse a bundle with one byte changed in a module source', () => {
    const text = serializeAgentBundle(exportAgentBundle(anAgent()));
    const sut = refusal(() => importAgentBundleText(edited(text, 'def _celsius', '32', '33')));
    expect(sut).toMatchObject({ code: 'BUNDLE_MODULE_HASH_MISMATCH', status: 422, details: { module: 'weather' } });
    expect(sut.message).toContain('"weather"');
  });

  it('should refuse a changed module source even when its own sha256 was updated', () => {
    const bundle = exportAgentBundle(anAgent());
    const source = WEATHER_SOURCE.replace('32', '33');
    const [module] = bundle.agent.pythonModules;
    const forged = { ...bundle, agent: { ...bundle.agent, pythonModules: [{ ...module, source, sha256: sha256OfSource(source) }] } };
    expect(refusal(() => importAgentBundle(forged))).toMatchObject({ code: 'BUNDLE_HASH_MISMATCH', status: 422 });
  });

  it('should refuse a bundle with one byte changed in the instructions', () => {
    const text = serializeAgentBundle(exportAgentBundle(anAgent()));
    const sut = refusal(() => importAgentBundleText(edited(text, '"instructions"', 'brief', 'Brief')));
    expect(sut).toMatchObject({ code: 'BUNDLE_HASH_MISMATCH', status: 422 });
    expect(sut.message).toMatch(/changed or corrupted/);
  });

  it.each([
    ['text that is not JSON', '{"format": "drydock.agent-bundle",'],
    ['a JSON array', '[]'],
    ['another format', JSON.stringify({ format: 'something-else', version: 1 })],
    ['no format at all', JSON.stringify({ version: 1 })],
  ])('should refuse %s as BUNDLE_INVALID', (_, text) => {
    expect(refusal(() => importAgentBundleText(text))).toMatchObject({ code: 'BUNDLE_INVALID', status: 400 });
  });

  it('should refuse a version it does not read', () => {
    const bundle = { ...exportAgentBundle(anAgent()), version: 2 };
    const sut = refusal(() => importAgentBundle(bundle));
    expect(sut).toMatchObject({ code: 'BUNDLE_UNSUPPORTED_VERSION', status: 400 });
    expect(sut.message).toContain('version 2');
  });

  it.each<[string, (bundle: ReturnType<typeof exportAgentBundle>) => unknown]>([
    ['an unknown field', (b) => ({ ...b, agent: { ...b.agent, secret: 'x' } })],
    ['a missing field', (b) => ({ ...b, agent: { ...b.agent, instructions: undefined } })],
    ['a malformed hash', (b) => ({ ...b, sha256: 'abc' })],
    ['a module name that is not an identifier', (b) => ({
      ...b,
      agent: { ...b.agent, pythonModules: [{ ...b.agent.pythonModules[0], name: 'my module' }] },
    })],
  ])('should refuse a bundle with %s as BUNDLE_INVALID', (_, change) => {
    const sut = refusal(() => importAgentBundle(change(exportAgentBundle(anAgent()))));
    expect(sut).toMatchObject({ code: 'BUNDLE_INVALID', status: 400 });
  });

  it.each<[string, Partial<PortableAgent>, string]>([
    [
      'two modules defining the same function',
      {
        pythonModules: [
          createPythonToolModule({ name: 'a', source: WEATHER_SOURCE, functions: [aSpec('to_celsius')] }),
          createPythonToolModule({ name: 'b', source: WEATHER_SOURCE, functions: [aSpec('to_celsius')] }),
        ],
      },
      'defined by both a and b',
    ],
    [
      'a function named like a built-in tool',
      { pythonModules: [createPythonToolModule({ name: 'a', source: WEATHER_SOURCE, functions: [aSpec('read_file')] })] },
      'name of a built-in tool',
    ],
  ])('should refuse %s', (_, overrides, reason) => {
    const sut = refusal(() => exportAgentBundle(anAgent(overrides)));
    expect(sut).toMatchObject({ code: 'BUNDLE_INVALID' });
    expect(sut.message).toContain(reason);
  });
});

import { createHash } from 'node:crypto';
import { PythonToolError } from './python-tools.errors.js';
import { createPythonToolModule, parsePythonToolModule, pythonToolSpecSchema, sha256OfSource, type PythonToolSpec } from './tool-module.js';

const spec: PythonToolSpec = {
  name: 'forecast',
  description: 'Forecast the weather.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer', default: 3 } },
    required: ['city'],
    additionalProperties: false,
  },
  required: ['city'],
};

function refusal(fn: () => unknown): PythonToolError {
  try {
    fn();
  } catch (error) {
    if (error instanceof PythonToolError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe(sha256OfSource.name, () => {
  it('should hash the UTF-8 bytes of the source', () => {
    const source = 'def größe():\n    return "🚀"\n';
    expect(sha256OfSource(source)).toBe(createHash('sha256').update(Buffer.from(source, 'utf8')).digest('hex'));
  });
});

describe(createPythonToolModule.name, () => {
  it('should record the source with its sha256', () => {
    const source = 'def forecast(city: str, days: int = 3):\n    return city\n';
    const sut = createPythonToolModule({ name: 'weather', source, functions: [spec] });
    expect(sut).toEqual({ name: 'weather', source, sha256: sha256OfSource(source), functions: [spec] });
  });

  it.each([
    ['a module name with a space', { name: 'my tools', source: '', functions: [] }],
    ['a function listed twice', { name: 'm', source: '', functions: [spec, spec] }],
    ['a lone surrogate in the source', { name: 'm', source: 'x = "\ud800"', functions: [] }],
  ])('should refuse %s', (_, input) => {
    expect(refusal(() => createPythonToolModule(input))).toMatchObject({ code: 'INVALID_TOOL_MODULE', status: 400 });
  });
});

describe(parsePythonToolModule.name, () => {
  it('should refuse a record whose source does not match its sha256', () => {
    const record = { ...createPythonToolModule({ name: 'weather', source: 'x = 1\n', functions: [] }), source: 'x = 2\n' };
    const sut = refusal(() => parsePythonToolModule(record));
    expect(sut).toMatchObject({ code: 'MODULE_HASH_MISMATCH', status: 422 });
    expect(sut.message).toContain('"weather"');
  });
});

describe('pythonToolSpecSchema', () => {
  it.each<[string, unknown]>([
    ['required that differs from parameters.required', { ...spec, required: [] }],
    ['a required name that is not a parameter', { ...spec, required: ['x'], parameters: { ...spec.parameters, required: ['x'] } }],
    ['a private function name', { ...spec, name: '_helper' }],
    ['parameters that allow extra properties', { ...spec, parameters: { ...spec.parameters, additionalProperties: true } }],
  ])('should refuse %s', (_, value) => {
    expect(pythonToolSpecSchema.safeParse(value).success).toBe(false);
  });

  it('should accept a spec as derive_schema.py writes it', () => {
    expect(pythonToolSpecSchema.parse(spec)).toEqual(spec);
  });
});

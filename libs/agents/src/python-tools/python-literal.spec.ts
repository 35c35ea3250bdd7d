import { spawnSync } from 'node:child_process';
import { pythonStringLiteral } from './python-literal.js';

// Python's own reading of each literal, sent back as JSON (ASCII, lone surrogates escaped).
function pythonReads(literals: string[]): string[] {
  const code = `import json\nprint(json.dumps([${literals.join(', ')}]))`;
  const done = spawnSync('python3', ['-c', code], { encoding: 'utf8', timeout: 30_000 });
  if (done.status !== 0) throw new Error(done.stderr);
  return JSON.parse(done.stdout) as string[];
}

describe(pythonStringLiteral.name, () => {
  const texts = [
    '',
    'plain',
    '" \' """ \'\'\' \\ \\" \\\\"',
    'line\nfeed\rreturn\ttab\u0000nul\u0007bell\u007fdel\u0085nel',
    'é ü 中文 \u2028\u2029 \ufeff',
    '🚀 astral 𝄞',
    'lone \ud800 and \udfff surrogates',
    '\\N{BULLET} \\x41 \\u0041 \\U00000041',
  ];

  it('should be read back by Python as exactly the same string', () => {
    expect(pythonReads(texts.map(pythonStringLiteral))).toEqual(texts);
  });

  it('should be printable ASCII only', () => {
    for (const text of texts) expect(pythonStringLiteral(text)).toMatch(/^"[\x20-\x7e]*"$/);
  });
});

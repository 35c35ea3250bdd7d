import { assignBlocksToCalls, samePath, type ExtractionToolCall } from './block-assignment.js';

const lines = (...xs: string[]) => xs.join('\n');
const run = (id: string, file_path: string): ExtractionToolCall => ({
  id,
  name: 'python_run_prepared',
  args: { file_path, description: 'run it' },
});
const write = (id: string, file_path: string): ExtractionToolCall => ({
  id,
  name: 'file_write',
  args: { file_path, description: 'save it' },
});

describe(assignBlocksToCalls.name, () => {
  it('should give one call the only block', () => {
    const sut = assignBlocksToCalls(lines('Running:', '```python', 'print(1)', '```'), [run('c1', '/tmp/a.py')]);
    expect(sut.get('c1')).toEqual({ ok: true, content: 'print(1)', language: 'python', blockIndex: 0 });
  });

  it('should give two calls the two blocks in order', () => {
    const text = lines('```csv', 'a,b', '```', 'then', '```python', 'print(open("/data/x.csv").read())', '```');
    const sut = assignBlocksToCalls(text, [write('w', '/data/x.csv'), run('r', '/tmp/read.py')]);
    expect(sut.get('w')).toMatchObject({ ok: true, content: 'a,b', language: 'csv' });
    expect(sut.get('r')).toMatchObject({ ok: true, content: 'print(open("/data/x.csv").read())', language: 'python' });
  });

  it('should match blocks to calls by file hint when they are out of order', () => {
    const text = lines(
      '```python file=/tmp/read.py',
      'print(2)',
      '```',
      '```csv file="data/x.csv"',
      'a,b',
      '```',
    );
    const sut = assignBlocksToCalls(text, [write('w', '/data/x.csv'), run('r', './tmp/read.py')]);
    expect(sut.get('w')).toMatchObject({ ok: true, content: 'a,b', blockIndex: 1 });
    expect(sut.get('r')).toMatchObject({ ok: true, content: 'print(2)', blockIndex: 0 });
  });

  it('should give unhinted blocks in order to the calls a hint did not serve', () => {
    const text = lines('```text', 'first', '```', '```csv file=b.csv', 'hinted', '```', '```', 'second', '```');
    const sut = assignBlocksToCalls(text, [write('a', 'a.txt'), write('b', 'b.csv'), write('c', 'c.txt')]);
    expect(sut.get('a')).toMatchObject({ ok: true, content: 'first' });
    expect(sut.get('b')).toMatchObject({ ok: true, content: 'hinted' });
    expect(sut.get('c')).toMatchObject({ ok: true, content: 'second' });
  });

  it('should not take the language tag into account', () => {
    const text = lines('Expected output:', '```text', '42', '```', '```python', 'print(42)', '```');
    expect(assignBlocksToCalls(text, [run('r', 'a.py')]).get('r')).toMatchObject({ ok: true, content: '42' });
  });

  it('should tell the model where to put the code when the message has no block', () => {
    const sut = assignBlocksToCalls('I will run it now.', [run('r', '/tmp/a.py'), write('w', 'x.csv')]);
    expect(sut.get('r')).toEqual({
      ok: false,
      error:
        'No fenced code block found in your message for python_run_prepared(file_path="/tmp/a.py"). ' +
        'Put the Python code in a ```python block in the same message as the tool call.',
    });
    expect(sut.get('w')).toEqual({
      ok: false,
      error:
        'No fenced code block found in your message for file_write(file_path="x.csv"). ' +
        'Put the file content in a ``` block in the same message as the tool call.',
    });
  });

  it('should fail only the calls left over when there are more calls than blocks', () => {
    const sut = assignBlocksToCalls(lines('```', 'one', '```'), [write('a', 'a.txt'), write('b', 'b.txt')]);
    expect(sut.get('a')).toMatchObject({ ok: true, content: 'one' });
    const b = sut.get('b');
    expect(b?.ok).toBe(false);
    expect(b).toMatchObject({
      error: expect.stringContaining(
        'No fenced code block is left in your message for file_write(file_path="b.txt"): ' +
          'the message has 1 fenced code block for 2 tool calls that each need one.',
      ),
    });
    expect(b).toMatchObject({ error: expect.stringContaining('``` file=b.txt') });
  });

  it('should name a hinted block whose path matches no call', () => {
    const sut = assignBlocksToCalls(lines('```csv file=data/y.csv', 'a', '```'), [write('w', 'data/x.csv')]);
    expect(sut.get('w')).toMatchObject({
      ok: false,
      error: expect.stringContaining('The block marked file="data/y.csv" matches no tool call\'s file_path.'),
    });
  });

  it('should ignore calls to other tools and leave them out of the result', () => {
    const calls = [{ id: 'l', name: 'ls', args: { path: '/' } }, run('r', 'a.py')];
    const sut = assignBlocksToCalls(lines('```python', 'x', '```'), calls);
    expect([...sut.keys()]).toEqual(['r']);
    expect(sut.get('r')).toMatchObject({ ok: true, content: 'x' });
  });

  it('should let a call without an id take its block in order without reporting it', () => {
    const calls = [{ name: 'file_write', args: { file_path: 'a' } }, write('b', 'b')];
    const sut = assignBlocksToCalls(lines('```', 'A', '```', '```', 'B', '```'), calls);
    expect([...sut.entries()]).toEqual([['b', { ok: true, content: 'B', language: null, blockIndex: 1 }]]);
  });

  it('should assign an unclosed final block', () => {
    const sut = assignBlocksToCalls(lines('```python', 'print(1)'), [run('r', 'a.py')]);
    expect(sut.get('r')).toMatchObject({ ok: true, content: 'print(1)' });
  });

  it('should assign blocks from a CRLF message', () => {
    const sut = assignBlocksToCalls('```csv file=a.csv\r\nx,y\r\n1,2\r\n```\r\n', [write('w', '/a.csv')]);
    expect(sut.get('w')).toMatchObject({ ok: true, content: 'x,y\n1,2' });
  });
});

describe(samePath.name, () => {
  it.each([
    ['/data/x.csv', 'data/x.csv'],
    ['./data/x.csv', '/data/x.csv'],
    ['.//data//x.csv', 'data/x.csv'],
    [' x.csv ', 'x.csv'],
  ])('should treat %j and %j as the same path', (a, b) => {
    expect(samePath(a, b)).toBe(true);
  });

  it.each([
    ['/data/x.csv', '/data/y.csv'],
    ['data/x.csv', 'x.csv'],
    ['../x.csv', 'x.csv'],
  ])('should tell %j and %j apart', (a, b) => {
    expect(samePath(a, b)).toBe(false);
  });
});

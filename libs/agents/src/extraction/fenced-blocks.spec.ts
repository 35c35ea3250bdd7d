import { parseFencedBlocks, parseInfo } from './fenced-blocks.js';

const lines = (...xs: string[]) => xs.join('\n');

describe(parseFencedBlocks.name, () => {
  it('should find blocks in order with language, content and offsets', () => {
    const text = lines('Here:', '```python', 'print(1)', '```', 'and', '```csv', 'a,b', '1,2', '```', 'done');
    const sut = parseFencedBlocks(text);
    expect(sut).toMatchObject([
      { language: 'python', content: 'print(1)', path: null, closed: true },
      { language: 'csv', content: 'a,b\n1,2', path: null, closed: true },
    ]);
    expect(text.slice(sut[0].start, sut[0].end)).toBe('```python\nprint(1)\n```');
    expect(text.slice(sut[1].start, sut[1].end)).toBe('```csv\na,b\n1,2\n```');
  });

  it('should return no blocks for text without fences or with inline code only', () => {
    expect(parseFencedBlocks('')).toEqual([]);
    expect(parseFencedBlocks('Use `x` and ``y``.')).toEqual([]);
    // A backtick in a backtick fence's info string makes it inline code, not a fence.
    expect(parseFencedBlocks('```print(1)```\nmore')).toEqual([]);
  });

  it.each([
    ['c++', '#include <x>\nint main() {}'],
    ['objective-c', '@interface Foo : NSObject\n@end'],
    ['py', 'x = 1'],
    ['text', 'plain words'],
  ])('should keep the %s language tag whole', (language, content) => {
    const [sut] = parseFencedBlocks(lines(`\`\`\`${language}`, content, '```'));
    expect(sut).toMatchObject({ language, content });
  });

  it('should leave the language null when the info string is empty', () => {
    const [sut] = parseFencedBlocks(lines('```', 'x', '```'));
    expect(sut).toMatchObject({ language: null, info: '', content: 'x' });
  });

  it('should lower-case the language tag', () => {
    expect(parseFencedBlocks(lines('```Python', 'x', '```'))[0].language).toBe('python');
  });

  it('should parse a tilde fence, whose info string may contain backticks', () => {
    const [sut] = parseFencedBlocks(lines('~~~python `odd`', 'print("hi")', '~~~'));
    expect(sut).toMatchObject({ fenceChar: '~', fenceLength: 3, language: 'python', content: 'print("hi")' });
  });

  it('should keep ``` lines inside a four-backtick fence', () => {
    const code = lines('doc = """', '```python', 'print(1)', '```', '"""', 'print(doc)');
    const sut = parseFencedBlocks(lines('````python', code, '````', 'after'));
    expect(sut).toHaveLength(1);
    expect(sut[0]).toMatchObject({ fenceLength: 4, content: code, closed: true });
  });

  it('should close a fence only with a run at least as long as the opening one', () => {
    const sut = parseFencedBlocks(lines('````', 'a', '```', 'b', '`````', 'c'));
    expect(sut).toHaveLength(1);
    expect(sut[0].content).toBe('a\n```\nb');
  });

  it('should keep ~~~ lines inside a backtick fence and ``` lines inside a tilde fence', () => {
    expect(parseFencedBlocks(lines('```', 'a', '~~~', 'b', '```'))[0].content).toBe('a\n~~~\nb');
    expect(parseFencedBlocks(lines('~~~', 'a', '```', 'b', '~~~'))[0].content).toBe('a\n```\nb');
  });

  it('should not close a fence with a line that has an info string', () => {
    const [sut] = parseFencedBlocks(lines('```', 'a', '```python', 'b', '```'));
    expect(sut.content).toBe('a\n```python\nb');
  });

  it('should accept trailing spaces after a closing fence', () => {
    const [sut] = parseFencedBlocks('```\na\n```  \t\nafter');
    expect(sut).toMatchObject({ content: 'a', closed: true });
  });

  it('should handle CRLF and lone CR line endings, giving content with \\n', () => {
    const text = '```python\r\nx = 1\r\ny = 2\r\n```\r\nafter\r\n~~~\rz\r~~~';
    const sut = parseFencedBlocks(text);
    expect(sut).toMatchObject([
      { language: 'python', content: 'x = 1\ny = 2', closed: true },
      { content: 'z', closed: true },
    ]);
    expect(text.slice(sut[0].start, sut[0].end)).toBe('```python\r\nx = 1\r\ny = 2\r\n```');
  });

  it('should accept fences indented by up to three spaces and remove that indentation from the content', () => {
    const text = lines('1. Save it:', '   ```csv', '   a,b', '     indented', ' 1,2', '   ```');
    const [sut] = parseFencedBlocks(text);
    expect(sut).toMatchObject({ language: 'csv', content: 'a,b\n  indented\n1,2', closed: true });
    expect(sut.start).toBe(text.indexOf('   ```csv'));
  });

  it('should not treat a fence indented by four spaces or a tab as a fence', () => {
    expect(parseFencedBlocks(lines('    ```', 'a', '    ```'))).toEqual([]);
    expect(parseFencedBlocks(lines('\t```', 'a', '\t```'))).toEqual([]);
  });

  it('should run an unclosed fence to the end of the text and mark it unclosed', () => {
    const text = lines('intro', '```python', 'print(1)', '', 'print(2)', '');
    const sut = parseFencedBlocks(text);
    expect(sut).toHaveLength(1);
    expect(sut[0]).toMatchObject({ content: 'print(1)\n\nprint(2)', closed: false, end: text.length });
  });

  it('should swallow later fences into an unclosed fence of a longer run', () => {
    const sut = parseFencedBlocks(lines('````', 'a', '```py', 'b', '```'));
    expect(sut).toHaveLength(1);
    expect(sut[0]).toMatchObject({ content: 'a\n```py\nb\n```', closed: false });
  });

  it('should give an empty block empty content', () => {
    expect(parseFencedBlocks(lines('```python', '```'))[0]).toMatchObject({ content: '', closed: true });
  });

  it('should read file= and path= hints, quoted or not', () => {
    const text = lines(
      '```csv file="data/in put.csv"',
      'a',
      '```',
      "```python path='/tmp/run.py'",
      'b',
      '```',
      '``` file=notes.txt',
      'c',
      '```',
    );
    expect(parseFencedBlocks(text)).toMatchObject([
      { language: 'csv', path: 'data/in put.csv', content: 'a' },
      { language: 'python', path: '/tmp/run.py', content: 'b' },
      { language: null, path: 'notes.txt', content: 'c' },
    ]);
  });
});

describe(parseInfo.name, () => {
  it.each([
    ['', null, null],
    ['python', 'python', null],
    ['python file=a.py', 'python', 'a.py'],
    ['python title="x y" path=./b.py', 'python', './b.py'],
    ['FILE=a.txt', null, 'a.txt'],
    ['csv file=""', 'csv', null],
    ['python extra words', 'python', null],
  ])('should read %j as language %j and path %j', (info, language, path) => {
    expect(parseInfo(info)).toEqual({ language, path });
  });
});

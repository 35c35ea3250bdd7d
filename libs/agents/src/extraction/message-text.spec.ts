import { AIMessage } from '@langchain/core/messages';
import { assignBlocksToCalls } from './block-assignment.js';
import { messageText } from './message-text.js';

describe(messageText.name, () => {
  it('should return string content as it is', () => {
    expect(messageText('```\nx\n```')).toBe('```\nx\n```');
  });

  it('should return an empty string for missing content', () => {
    expect(messageText(undefined)).toBe('');
    expect(messageText(null)).toBe('');
    expect(messageText([])).toBe('');
  });

  it('should join text parts with newlines and skip other parts', () => {
    const sut = messageText([
      { type: 'text', text: '```python\nprint(1)\n```' },
      { type: 'image_url', image_url: { url: 'data:,' } },
      { type: 'tool_use', id: 't', name: 'x', input: {} },
      'plain',
      { type: 'text', text: 'tail' },
    ]);
    expect(sut).toBe('```python\nprint(1)\n```\nplain\ntail');
  });

  it('should let a fence close at the end of one text part before the next begins', () => {
    const message = new AIMessage({
      content: [
        { type: 'text', text: '```csv\na,b\n```' },
        { type: 'text', text: '```python\nprint(2)\n```' },
      ],
      tool_calls: [
        { id: 'w', name: 'file_write', args: { file_path: 'a.csv', description: 'd' } },
        { id: 'r', name: 'python_run_prepared', args: { file_path: 'b.py', description: 'd' } },
      ],
    });
    const sut = assignBlocksToCalls(messageText(message.content), message.tool_calls ?? []);
    expect(sut.get('w')).toMatchObject({ ok: true, content: 'a,b' });
    expect(sut.get('r')).toMatchObject({ ok: true, content: 'print(2)' });
  });
});

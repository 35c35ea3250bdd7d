import { createFileWriteTool } from './file-write.tool.js';
import { NO_EXTRACTED_CONTENT_TEXT } from './extracted-content.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

const scope = { tenantId: 'ten_a', threadId: 'chat-1' };
const args = { file_path: '/data/employees.csv', description: 'Employees' };

describe('file_write tool', () => {
  it('should write the content extracted from the message, not from its arguments', async () => {
    const { vfs, ctx } = makeHarness();
    const out = await invoke(createFileWriteTool(), args, ctx({ extracted: { content: 'name,age\nAda,36\n' } }));
    expect(out.text).toBe('Created /data/employees.csv (2 lines, 16 bytes).');
    expect((await vfs.readContent(scope, '/data/employees.csv')).content.toString()).toBe('name,age\nAda,36\n');
  });

  it('should replace an existing file', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/data/employees.csv', 'old');
    const out = await invoke(createFileWriteTool(), args, ctx({ extracted: { content: 'new' } }));
    expect(out.text).toBe('Replaced the content of /data/employees.csv (1 line, 3 bytes).');
    expect((await vfs.readContent(scope, '/data/employees.csv')).content.toString()).toBe('new');
  });

  it('should return the extraction error and write nothing', async () => {
    const { vfs, ctx } = makeHarness();
    const error = 'No fenced code block found in your message for file_write. Put the file content in a ``` block.';
    const out = await invoke(createFileWriteTool(), args, ctx({ extracted: { error } }));
    expect(out.text).toBe(`Error: ${error}`);
    expect(out.artifact.isError).toBe(true);
    expect(await vfs.exists(scope, '/data/employees.csv')).toBe(false);
  });

  it('should say how to provide the content when nothing was extracted', async () => {
    const { vfs, ctx } = makeHarness();
    const out = await invoke(createFileWriteTool(), args, ctx());
    expect(out.text).toBe(NO_EXTRACTED_CONTENT_TEXT);
    expect(out.artifact.isError).toBe(true);
    expect(await vfs.exists(scope, '/data/employees.csv')).toBe(false);
  });

  it('should answer an invalid path as text', async () => {
    const { ctx } = makeHarness();
    const out = await invoke(createFileWriteTool(), { ...args, file_path: '/a\u0000b' }, ctx({ extracted: { content: 'x' } }));
    expect(out.text).toMatch(/^Error: Invalid path .*NUL character\. Use an absolute path such as \/data\/report\.csv\.$/);
  });
});

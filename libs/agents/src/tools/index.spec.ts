import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { BUILTIN_TOOL_NAMES, createBuiltinTools } from './index.js';
import { isExtractionTool } from '../extraction/extraction.constants.js';

describe(createBuiltinTools.name, () => {
  it('should build one tool per built-in name, named as the model calls it', () => {
    const sut = createBuiltinTools();
    expect([...sut.keys()]).toEqual([...BUILTIN_TOOL_NAMES]);
    for (const [name, tool] of sut) expect(tool.name).toBe(name);
  });

  it('should describe every tool and every argument for the model', () => {
    for (const tool of createBuiltinTools().values()) {
      expect(tool.description.length).toBeGreaterThan(40);
      const schema = toJsonSchema(tool.schema) as { properties: Record<string, { description?: string }> };
      for (const [field, property] of Object.entries(schema.properties)) {
        expect(`${tool.name}.${field}: ${property.description ?? ''}`).toMatch(/: .{10,}/);
      }
    }
  });

  it('should keep code and file content out of the extraction tools\' arguments', () => {
    for (const tool of createBuiltinTools().values()) {
      if (!isExtractionTool(tool.name)) continue;
      const schema = toJsonSchema(tool.schema) as { properties: Record<string, unknown>; required?: string[] };
      expect(Object.keys(schema.properties).sort()).toEqual(['description', 'file_path']);
    }
  });

  it('should give the arguments seed 004 names and defaults', () => {
    const props = (name: string) =>
      Object.keys((toJsonSchema(createBuiltinTools().get(name)!.schema) as { properties: object }).properties);
    expect(props('read_file')).toEqual(['file_path', 'offset', 'limit']);
    expect(props('write_file')).toEqual(['file_path', 'content']);
    expect(props('edit_file')).toEqual(['file_path', 'old_string', 'new_string', 'replace_all']);
    expect(props('glob')).toEqual(['pattern', 'path']);
    expect(props('grep')).toEqual(['pattern', 'path', 'glob', 'output_mode', 'regex']);
    expect(props('ls')).toEqual(['path']);
    expect(props('delete_file')).toEqual(['file_path']);
    expect(props('execute_python')).toEqual(['code']);
    expect(props('execute')).toEqual(['command', 'timeout_ms']);
  });

  it('should require only the arguments that have no default', () => {
    const required = (name: string) => (toJsonSchema(createBuiltinTools().get(name)!.schema) as { required?: string[] }).required ?? [];
    expect(required('ls')).toEqual([]);
    expect(required('execute')).toEqual(['command']);
    expect(required('read_file')).toEqual(['file_path']);
    expect(required('edit_file')).toEqual(['file_path', 'old_string', 'new_string']);
    expect(required('glob')).toEqual(['pattern']);
    expect(required('grep')).toEqual(['pattern']);
  });
});

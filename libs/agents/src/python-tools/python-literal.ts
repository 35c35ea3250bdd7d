// Python source text built from untrusted strings. Every value goes into the generated
// code as an ASCII-only, double-quoted Python string literal, escaped code point by code
// point, so no input can end the literal or change the code around it.

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

export function pythonStringLiteral(text: string): string {
  let out = '"';
  // for..of walks code points; a lone surrogate comes through as one unit and becomes
  // \udXXX, which Python also keeps as a lone surrogate.
  for (const ch of text) {
    const simple = SIMPLE_ESCAPES[ch];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp <= 0xff) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    // Python does not pair \ud83d\ude00 into one character: astral ones need \U.
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return out + '"';
}

// A REPL cell whose value is the JSON text returned by `body` (the body of a Python
// function that ends in `return JsonText(<str>)`). The REPL shows a cell's trailing
// expression with repr(); the str subclass makes that repr the JSON itself, so the caller
// reads the result's text straight into JSON.parse. The function runs with fresh globals,
// so names the user defined in the REPL (`json = ...`, `str = ...`) cannot change it, and
// it is removed from the REPL namespace afterwards, so a call leaves no names behind.
export function jsonValueCell(helperName: string, comment: string, body: string): string {
  const indented = body
    .split('\n')
    .map((line) => (line ? `    ${line}` : line))
    .join('\n');
  return [
    `# ${comment.replace(/[^\x20-\x7e]/g, '?')}`,
    `def ${helperName}():`,
    '    class JsonText(str):',
    '        def __repr__(self):',
    '            return str.__str__(self)',
    '',
    indented,
    `${helperName} = __import__("types").FunctionType(`,
    `    ${helperName}.__code__, {"__builtins__": __import__("builtins"), "__name__": "${helperName}"}`,
    ')()',
    // `globals` may be shadowed by the user's own variables; the builtin may not be.
    `__import__("builtins").globals().pop("${helperName}")`,
    '',
  ].join('\n');
}

import { canonicalCommand, commandLineOf, commandSpecOf } from './command-spec.js';

describe('commandSpecOf', () => {
  it('should run a shell line with /bin/bash -c and an argv as it is, in /session by default', () => {
    expect(commandSpecOf({ command: 'ls | wc -l' })).toEqual({ argv: ['/bin/bash', '-c', 'ls | wc -l'], cwd: '/session', env: {} });
    expect(commandSpecOf({ argv: ['git', 'status'], stdin: '' })).toEqual({ argv: ['git', 'status'], cwd: '/session', env: {}, stdin: '' });
  });

  it('should normalise cwd and keep it under /session', () => {
    expect(commandSpecOf({ command: 'pwd', cwd: '/session/a/../b/' }).cwd).toBe('/session/b');
    for (const cwd of ['/etc', '/session/../etc', 'session', '/sessionx', '/session\u0000/x']) {
      expect(() => commandSpecOf({ command: 'pwd', cwd })).toThrow(expect.objectContaining({ code: 'INVALID_CWD', status: 400 }));
    }
  });

  it("should refuse both or neither of command and argv, an empty argv and NUL characters", () => {
    for (const input of [{}, { command: 'a', argv: ['a'] }, { argv: [] }, { argv: ['a\u0000b'] }]) {
      expect(() => commandSpecOf(input)).toThrow(expect.objectContaining({ code: 'INVALID_COMMAND' }));
    }
  });

  it("should refuse variable names a shell would not take and the platform's own", () => {
    for (const name of ['1X', 'A-B', '', 'DRYDOCK_SANDBOX_UID', 'HOME', 'USER', 'LOGNAME']) {
      expect(() => commandSpecOf({ command: 'env', env: { [name]: 'x' } })).toThrow(expect.objectContaining({ code: 'INVALID_ENV' }));
    }
    expect(() => commandSpecOf({ command: 'env', env: { A: 1 as unknown as string } })).toThrow(expect.objectContaining({ code: 'INVALID_ENV' }));
    expect(commandSpecOf({ command: 'env', env: { B: '2', A: '1' } }).env).toEqual({ A: '1', B: '2' });
  });
});

describe('canonicalCommand', () => {
  it('should be the same text for the same command whatever the order of its variables, and differ for a background one', () => {
    const a = canonicalCommand(commandSpecOf({ command: 'x', env: { B: '2', A: '1' } }));
    const b = canonicalCommand(commandSpecOf({ command: 'x', env: { A: '1', B: '2' } }));
    expect(a).toBe(b);
    expect(canonicalCommand(commandSpecOf({ command: 'x' }), true)).not.toBe(canonicalCommand(commandSpecOf({ command: 'x' })));
  });

  it('should show a shell line as given and an argv quoted as a shell would read it', () => {
    expect(commandLineOf(canonicalCommand(commandSpecOf({ command: 'sleep 1 && echo hi' })))).toBe('sleep 1 && echo hi');
    expect(commandLineOf(canonicalCommand(commandSpecOf({ argv: ['printf', '%s\n', "it's"] })))).toBe("printf '%s\n' 'it'\\''s'");
  });
});

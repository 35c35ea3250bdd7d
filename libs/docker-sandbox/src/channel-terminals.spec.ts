import { TerminalRefusedError, type ReplRequest, type SandboxTerminalEvent } from '@drydock/execution';
import { ChannelTerminals } from './channel-terminals.js';

// The worker's side of terminals over a channel whose other end is played here: opens
// answered by id, bytes as base64 both ways, nothing sent for a terminal not open, and
// every open terminal ended when the sandbox goes.
describe('ChannelTerminals', () => {
  const setup = () => {
    const sent: ReplRequest[] = [];
    const terminals = new ChannelTerminals((message) => sent.push(message));
    const events: SandboxTerminalEvent[] = [];
    terminals.onEvent((event) => events.push(event));
    return { sent, terminals, events };
  };

  it('should open with a pty-open frame and answer the pid; a refusal is typed', async () => {
    const { sent, terminals } = setup();
    const opened = terminals.open('pty_1', { cols: 100, rows: 30 });
    expect(sent).toEqual([{ op: 'pty-open', id: 'pty_1', cols: 100, rows: 30 }]);
    terminals.onFrame({ ev: 'pty-opened', id: 'pty_1', pid: 77 });
    await expect(opened).resolves.toEqual({ pid: 77 });
    const refused = terminals.open('pty_2', { cols: 80, rows: 24 });
    terminals.onFrame({ ev: 'pty-refused', id: 'pty_2', reason: 'limit', message: '4 terminals are open' });
    await expect(refused).rejects.toEqual(new TerminalRefusedError('limit', '4 terminals are open'));
    // Only the opened one takes input.
    terminals.input('pty_2', Buffer.from('x'));
    terminals.input('pty_1', Buffer.from('y'));
    expect(sent.slice(2)).toEqual([{ op: 'pty-input', id: 'pty_1', data64: Buffer.from('y').toString('base64') }]);
  });

  it('should send input, resizes and hang-ups of an open terminal only, and pass on its output and exit', async () => {
    const { sent, terminals, events } = setup();
    terminals.input('pty_1', Buffer.from('ls\r'));
    expect(sent).toEqual([]);
    const opened = terminals.open('pty_1', { cols: 80, rows: 24 });
    terminals.onFrame({ ev: 'pty-opened', id: 'pty_1', pid: 5 });
    await opened;
    terminals.input('pty_1', Buffer.from('ls\r'));
    terminals.resize('pty_1', { cols: 120, rows: 50 });
    terminals.close('pty_1');
    terminals.close('pty_1', true);
    expect(sent.slice(1)).toEqual([
      { op: 'pty-input', id: 'pty_1', data64: Buffer.from('ls\r').toString('base64') },
      { op: 'pty-resize', id: 'pty_1', cols: 120, rows: 50 },
      { op: 'pty-close', id: 'pty_1' },
      { op: 'pty-close', id: 'pty_1', force: true },
    ]);
    terminals.onFrame({ ev: 'pty-output', id: 'pty_1', data64: Buffer.from('a.txt\r\n').toString('base64') });
    terminals.onFrame({ ev: 'pty-exit', id: 'pty_1', exitCode: null, signal: 'SIGHUP' });
    expect(events).toEqual([
      { kind: 'output', terminalId: 'pty_1', data: Buffer.from('a.txt\r\n') },
      { kind: 'exit', terminalId: 'pty_1', exitCode: null, signal: 'SIGHUP' },
    ]);
    terminals.input('pty_1', Buffer.from('late'));
    expect(sent).toHaveLength(5);
  });

  it('should end every open terminal and fail every open in flight when the sandbox goes', async () => {
    const { terminals, events } = setup();
    const first = terminals.open('pty_1', { cols: 80, rows: 24 });
    terminals.onFrame({ ev: 'pty-opened', id: 'pty_1', pid: 5 });
    await first;
    const pending = terminals.open('pty_2', { cols: 80, rows: 24 });
    terminals.onGone(new Error('the container stopped'));
    await expect(pending).rejects.toThrow('the container stopped');
    expect(events).toEqual([{ kind: 'exit', terminalId: 'pty_1', exitCode: null, signal: null, lost: 'the container stopped' }]);
    await expect(terminals.open('pty_3', { cols: 80, rows: 24 })).rejects.toThrow('the container stopped');
  });
});

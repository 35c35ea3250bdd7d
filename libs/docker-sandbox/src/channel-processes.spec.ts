import { ProcessRefusedError, type ProcessEvent, type ReplRequest } from '@drydock/execution';
import { ChannelProcesses } from './channel-processes.js';

// The worker's side of background processes over a channel whose other end is played
// here: requests go out as frames, answers come back by id, events reach listeners.
describe('ChannelProcesses', () => {
  const setup = () => {
    const sent: ReplRequest[] = [];
    const processes = new ChannelProcesses((message) => sent.push(message));
    const events: ProcessEvent[] = [];
    processes.onEvent((event) => events.push(event));
    return { sent, processes, events };
  };

  it('should start a process with an exec frame and answer its pid; a refusal is typed', async () => {
    const { sent, processes } = setup();
    const started = processes.start('exe_1', { argv: ['sleep', '9'], cwd: '/session', env: {} });
    expect(sent[0]).toMatchObject({ op: 'exec', id: 'exe_1', background: true, command: { argv: ['sleep', '9'] } });
    processes.onFrame({ ev: 'bg-started', id: 'exe_1', pid: 42 });
    await expect(started).resolves.toEqual({ pid: 42 });
    expect(processes.running()).toEqual(['exe_1']);
    const refused = processes.start('exe_2', { argv: ['x'], cwd: '/session', env: {} });
    processes.onFrame({ ev: 'bg-refused', id: 'exe_2', reason: 'limit', message: '16 run already' });
    await expect(refused).rejects.toEqual(new ProcessRefusedError('limit', '16 run already'));
  });

  it('should answer reads, stdin and signals by their request ids, whatever order they come in', async () => {
    const { sent, processes } = setup();
    const read = processes.read('exe_1', 3, true);
    const signal = processes.signal('exe_1', 'SIGTERM');
    const [readFrame, signalFrame] = sent as unknown as [{ id: string }, { id: string }];
    expect(sent[0]).toMatchObject({ op: 'bg-read', process: 'exe_1', after: 3, watch: true });
    processes.onFrame({ ev: 'bg-signalled', id: signalFrame.id, process: 'exe_1', delivered: true });
    processes.onFrame({ ev: 'bg-output', id: readFrame.id, process: 'exe_1', known: true, chunks: [[4, 'stdout', 'hi\n']], first: 1, exit: null });
    await expect(signal).resolves.toBe(true);
    await expect(read).resolves.toEqual({ known: true, chunks: [[4, 'stdout', 'hi\n']], first: 1, exit: null });
    const stdin = processes.writeStdin('exe_1', Buffer.from('abc'), true);
    expect(sent[2]).toMatchObject({ op: 'bg-stdin', data64: 'YWJj', eof: true });
    processes.onFrame({ ev: 'bg-stdin-done', id: (sent[2] as { id: string }).id, process: 'exe_1', accepted: 3, refused: null });
    await expect(stdin).resolves.toEqual({ accepted: 3, refused: null });
  });

  it('should pass chunks and exits to listeners, and end every running process when the sandbox goes', async () => {
    const { processes, events } = setup();
    for (const id of ['exe_1', 'exe_2']) {
      const started = processes.start(id, { argv: ['x'], cwd: '/session', env: {} });
      processes.onFrame({ ev: 'bg-started', id, pid: 7 });
      await started;
    }
    processes.onFrame({ ev: 'bg-chunk', process: 'exe_1', seq: 1, name: 'stderr', text: 'e' });
    processes.onFrame({ ev: 'bg-exit', process: 'exe_1', exitCode: 0, signal: null, durationMs: 5, stdout: '', stderr: 'e', truncated: false });
    const pending = processes.read('exe_2', 0, false);
    processes.onGone(new Error('the sandbox channel closed'));
    await expect(pending).rejects.toThrow('the sandbox channel closed');
    expect(events).toEqual([
      { kind: 'chunk', processId: 'exe_1', seq: 1, name: 'stderr', text: 'e' },
      { kind: 'exit', processId: 'exe_1', exitCode: 0, signal: null, durationMs: 5, stdout: '', stderr: 'e', truncated: false },
      expect.objectContaining({ kind: 'exit', processId: 'exe_2', exitCode: null, lost: 'the sandbox channel closed' }),
    ]);
    expect(processes.running()).toEqual([]);
    await expect(processes.signal('exe_2', 'SIGKILL')).rejects.toThrow('the sandbox channel closed');
  });
});

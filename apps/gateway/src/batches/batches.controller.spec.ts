import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BatchEventStreams, BatchesService } from '@drydock/batches';
import type { TenantPrincipal } from '@drydock/core';
import { BatchesController } from './batches.controller.js';

// A response whose socket is always full: every write waits for a `drain`, which comes on
// the next turn, as for a client that reads the results slowly.
function slowResponse() {
  const res = Object.assign(new EventEmitter(), {
    statusCode: 0,
    written: 0,
    ended: false,
    mostCloseListeners: 0,
    setHeader: () => undefined,
    write(this: EventEmitter & { written: number; mostCloseListeners: number }) {
      this.written++;
      this.mostCloseListeners = Math.max(this.mostCloseListeners, this.listenerCount('close'));
      setImmediate(() => this.emit('drain'));
      return false;
    },
    end(this: { ended: boolean }) {
      this.ended = true;
    },
  });
  return res;
}

describe(BatchesController.name, () => {
  const principal = { tenantId: 'ten_1' } as TenantPrincipal;
  const LINES = 50;

  it('should leave no listener behind on the response for each wait of a slowly read results stream', async () => {
    const batches = {
      async *results() {
        for (let i = 0; i < LINES; i++) yield `{"index":${i}}\n`;
      },
    } as unknown as BatchesService;
    const sut = new BatchesController(batches, {} as BatchEventStreams);
    const req = new EventEmitter();
    const res = slowResponse();
    const reply = { hijack: () => undefined, raw: res } as unknown as FastifyReply;

    await sut.results(principal, 'bat_1', { raw: req } as unknown as FastifyRequest, reply);

    expect(res.written).toBe(LINES);
    expect(res.ended).toBe(true);
    expect(res.mostCloseListeners).toBeLessThanOrEqual(1);
    expect(res.listenerCount('close')).toBe(0);
    expect(res.listenerCount('drain')).toBe(0);
    expect(req.listenerCount('close')).toBe(0);
  });

  it('should stop writing when the client goes while the stream waits for room', async () => {
    const batches = {
      async *results() {
        for (let i = 0; ; i++) yield `{"index":${i}}\n`;
      },
    } as unknown as BatchesService;
    const sut = new BatchesController(batches, {} as BatchEventStreams);
    const req = new EventEmitter();
    const res = Object.assign(slowResponse(), {
      write(this: EventEmitter & { written: number }) {
        this.written++;
        // The client hangs up instead of reading.
        setImmediate(() => {
          req.emit('close');
          this.emit('close');
        });
        return false;
      },
    });
    const reply = { hijack: () => undefined, raw: res } as unknown as FastifyReply;

    await sut.results(principal, 'bat_1', { raw: req } as unknown as FastifyRequest, reply);

    expect(res.written).toBe(1);
    expect(res.ended).toBe(true);
    expect(res.listenerCount('drain')).toBe(0);
  });
});

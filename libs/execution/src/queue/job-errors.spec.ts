import { DrydockError } from '@drydock/core';
import { fromJobError, toJobError, WORKER_FAILED } from './job-errors.js';

class SomeLibError extends DrydockError {}

describe(toJobError.name, () => {
  it('should carry code, status, message and details of a DrydockError across the queue', () => {
    const thrown = new SomeLibError('DATASET_NOT_FOUND', 'No dataset named "x".', 422, { name: 'x' });
    const wire = JSON.parse(JSON.stringify(toJobError(thrown)));
    expect(wire).toEqual({ code: 'DATASET_NOT_FOUND', status: 422, message: 'No dataset named "x".', details: { name: 'x' } });
    const rethrown = fromJobError(wire);
    expect(rethrown).toBeInstanceOf(DrydockError);
    expect(rethrown).toMatchObject({ code: 'DATASET_NOT_FOUND', status: 422, message: 'No dataset named "x".', details: { name: 'x' } });
  });

  it('should not pass the text of an unexpected error on to the caller', () => {
    const wire = toJobError(new Error('connect ECONNREFUSED /var/run/docker.sock'));
    expect(wire.code).toBe(WORKER_FAILED);
    expect(wire.status).toBe(502);
    expect(wire.message).not.toContain('docker.sock');
  });

  it('should read a reply of an older worker, which carried only a message, as WORKER_FAILED', () => {
    expect(fromJobError('something broke')).toMatchObject({ code: WORKER_FAILED, status: 502 });
    expect(fromJobError({ code: 'X', status: 200, message: 'not an error status' })).toMatchObject({ code: WORKER_FAILED });
  });
});

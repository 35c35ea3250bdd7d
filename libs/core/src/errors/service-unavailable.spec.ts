import { outageOf, ServiceUnavailableError } from './service-unavailable.js';

describe(outageOf.name, () => {
  it.each([
    [{ name: 'QueryFailedError', message: 'x', driverError: { code: '57P01', message: 'terminating connection due to administrator command' } }, 'database'],
    [{ message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED', port: 5432 }, 'database'],
    [new Error('Connection terminated unexpectedly'), 'database'],
    [{ message: 'the database system is starting up', code: '57P03' }, 'database'],
    [{ name: 'MaxRetriesPerRequestError', message: 'Reached the max retries per request limit (which is 1).' }, 'redis'],
    [new Error('Command timed out'), 'redis'],
    [{ message: 'connect ECONNREFUSED 127.0.0.1:6379', code: 'ECONNREFUSED', port: 6379 }, 'redis'],
    [new ServiceUnavailableError('redis'), 'redis'],
  ])('should recognise %j as an outage of the %s', (error, service) => {
    expect(outageOf(error)).toBe(service);
  });

  it.each([
    [new Error('boom')],
    [{ name: 'QueryFailedError', message: 'duplicate key', driverError: { code: '23505' } }],
    [{ name: 'QueryFailedError', message: 'syntax error', driverError: { code: '42601' } }],
    [undefined],
  ])('should not take %j for an outage', (error) => {
    expect(outageOf(error)).toBeNull();
  });

  it('should carry 503, a stable code and the retry delay', () => {
    expect(new ServiceUnavailableError('database', 3)).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      details: { service: 'database', retryAfterSeconds: 3 },
    });
  });
});

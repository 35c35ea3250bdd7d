import { ConfigError } from '../config/app-config.js';
import { startupFailure } from './startup-failure.js';

describe(startupFailure.name, () => {
  const env = { REDIS_URL: 'redis://:s3cret@redis.internal:6390/3', DATABASE_URL: 'postgres://drydock:pw@db/drydock' };

  it('should give a configuration error its own message', () => {
    expect(startupFailure('worker', new ConfigError('DATABASE_URL is required'), env)).toBe('DATABASE_URL is required');
  });

  it('should name the unreachable service and the variable to check, without its password', () => {
    const message = startupFailure('worker', new Error('Command timed out'), env)!;
    expect(message).toBe(
      'The worker could not start: Redis did not answer (Command timed out). Check that it is running and that REDIS_URL (redis://:***@redis.internal:6390/3) points at it.',
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED', port: 5432 });
    expect(startupFailure('gateway', refused, env)).toContain('The gateway could not start: PostgreSQL did not answer');
    expect(startupFailure('gateway', refused, env)).toContain('DATABASE_URL (postgres://drydock:***@db/drydock)');
  });

  it('should hide a socket URL password given as a parameter', () => {
    const message = startupFailure('worker', new Error('Connection is closed.'), { REDIS_URL: 'unix:///var/run/redis.sock?db=2&password=hunter2' })!;
    expect(message).not.toContain('hunter2');
    expect(message).toContain('unix:///var/run/redis.sock?db=2&password=***');
  });

  it('should leave any other failure to be thrown with its stack', () => {
    expect(startupFailure('worker', new TypeError('x is not a function'), env)).toBeNull();
  });
});

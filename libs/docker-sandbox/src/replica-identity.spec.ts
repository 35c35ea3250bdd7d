import { hostname } from 'node:os';
import { composeReplicaId } from './replica-identity.js';

describe(composeReplicaId.name, () => {
  const labelled = (labels: Record<string, string>) => async (id: string) => {
    expect(id).toBe(hostname());
    return { Config: { Labels: labels } };
  };

  it('should name a Compose replica by its service and number', async () => {
    const inspect = labelled({ 'com.docker.compose.service': 'worker', 'com.docker.compose.container-number': '3' });
    expect(await composeReplicaId(inspect, true)).toBe('worker-3');
  });

  it('should give no id outside a container, outside Compose, or when the engine cannot tell', async () => {
    expect(await composeReplicaId(labelled({ 'com.docker.compose.service': 'worker', 'com.docker.compose.container-number': '1' }), false)).toBeNull();
    expect(await composeReplicaId(labelled({}), true)).toBeNull();
    expect(
      await composeReplicaId(async () => {
        throw new Error('no such container');
      }, true),
    ).toBeNull();
  });
});

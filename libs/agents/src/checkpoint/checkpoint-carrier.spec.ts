import { CheckpointCarrier, checkpointCarrierOf, CONFIG_CHECKPOINT_CARRIER, type CarriedWrite } from './checkpoint-carrier.js';

describe('CheckpointCarrier', () => {
  const events: string[] = [];
  const write = (name: string): CarriedWrite => ({
    ctes: (first) => `${name} AS (SELECT $${first})`,
    values: [name],
    shape: name,
    committed: () => events.push(`committed ${name}`),
  });
  const runAlone = (name: string) => async () => {
    events.push(`ran ${name}`);
  };

  beforeEach(() => {
    events.length = 0;
  });

  it('holds a write for the release, which takes it once', async () => {
    const carrier = new CheckpointCarrier(true);
    await carrier.hold(write('a'), runAlone('a'));

    const taken = carrier.take();

    expect(taken?.shape).toBe('a');
    expect(taken?.ctes(6)).toBe('a AS (SELECT $6)');
    expect(carrier.take()).toBeUndefined();
    // Taking runs nothing: the release runs it, and calls committed() after.
    expect(events).toEqual([]);
  });

  it('runs the write held, alone, when another comes first, and holds the newer one', async () => {
    const carrier = new CheckpointCarrier(true);
    await carrier.hold(write('a'), runAlone('a'));
    await carrier.hold(write('b'), runAlone('b'));

    expect(events).toEqual(['ran a', 'committed a']);
    expect(carrier.take()?.shape).toBe('b');
  });

  it('runs the write held before writes that must follow it, and then holds nothing', async () => {
    const carrier = new CheckpointCarrier(true);
    await carrier.runHeld();
    await carrier.hold(write('a'), runAlone('a'));
    await carrier.runHeld();

    expect(events).toEqual(['ran a', 'committed a']);
    expect(carrier.take()).toBeUndefined();
  });

  it('keeps a write that failed to run alone from being remembered as committed', async () => {
    const carrier = new CheckpointCarrier(true);
    await carrier.hold(write('a'), async () => {
      throw new Error('connection terminated');
    });

    await expect(carrier.hold(write('b'), runAlone('b'))).rejects.toThrow('connection terminated');
    expect(events).toEqual([]);
  });

  it("is found in a run's configurable only as a carrier", () => {
    const carrier = new CheckpointCarrier(true);
    expect(checkpointCarrierOf({ [CONFIG_CHECKPOINT_CARRIER]: carrier })).toBe(carrier);
    expect(checkpointCarrierOf({ [CONFIG_CHECKPOINT_CARRIER]: true })).toBeUndefined();
    expect(checkpointCarrierOf(undefined)).toBeUndefined();
  });
});

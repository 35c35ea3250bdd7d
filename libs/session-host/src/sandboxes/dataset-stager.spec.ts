import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatasetRegistry } from '@drydock/sessions';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { FakeSandbox, okOutcome } from '../../../../test/fakes/fake-sandbox.js';
import { sessionSpec } from '../session-host.spec-helper.js';
import { DatasetStager } from './dataset-stager.js';

describe(DatasetStager.name, () => {
  let root: string;
  let sut: DatasetStager;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'drydock-stager-'));
    await mkdir(join(root, 'shared', 'census', 'parts'), { recursive: true });
    await writeFile(join(root, 'shared', 'census', 'a.csv'), 'x,y\n');
    await writeFile(join(root, 'shared', 'census', 'parts', 'b.csv'), '1,2\n');
    await mkdir(join(root, 'shared', 'maps'));
    sut = new DatasetStager(new DatasetRegistry(makeConfig({ DATASETS_DIR: root })));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('should copy a dataset into /session/data/<name> and say how much it copied', async () => {
    const sandbox = new FakeSandbox('c1', async () => okOutcome());
    const staged = await sut.stage('ten_1', sandbox, 'census');
    expect(staged).toEqual({ name: 'census', mode: 'staged', files: 2, bytes: 8 });
    expect([...sandbox.session.keys()].sort()).toEqual(['/data/census/a.csv', '/data/census/parts/b.csv']);
  });

  it('should refuse a dataset that is not there with its typed error', async () => {
    const sandbox = new FakeSandbox('c1', async () => okOutcome());
    await expect(sut.stage('ten_1', sandbox, 'gone')).rejects.toMatchObject({ code: 'DATASET_NOT_FOUND' });
  });

  it('should resolve only the read-only datasets of a session to host folders', async () => {
    const spec = sessionSpec({ datasets: [{ name: 'maps', mode: 'local_ro' }, { name: 'census', mode: 'staged' }] });
    expect(await sut.readOnlyMounts(spec)).toEqual([{ name: 'maps', hostPath: expect.stringMatching(/shared\/maps$/) }]);
  });

  it('should re-stage what it can into a new sandbox and skip a dataset removed since', async () => {
    const spec = sessionSpec({ datasets: [{ name: 'gone', mode: 'staged' }, { name: 'census', mode: 'staged' }] });
    const sandbox = new FakeSandbox('c2', async () => okOutcome());
    await sut.restage(spec, sandbox);
    expect(sandbox.session.has('/data/census/a.csv')).toBe(true);
  });
});

import { DrydockError, ServiceUnavailableError } from '@drydock/core';
import { makeConfig } from '../../../test/factories/config.factory.js';
import type { TemplateBuildLogs } from './template-build-logs.js';
import type { TemplateBuildQueue } from './template-build-queue.js';
import type { TemplateOwner, TemplateRecord, TemplatesRepository, TemplateVersionRecord } from './templates.repository.js';
import { TemplatesService } from './templates.service.js';

const template = (over: Partial<TemplateRecord> = {}): TemplateRecord => ({ id: 'tpl_a', tenantId: 'ten_a', name: 'sqlite', description: null, poolSize: 0, createdAt: new Date(), ...over });
const version = (n: number, status: TemplateVersionRecord['status']): TemplateVersionRecord => ({
  templateId: 'tpl_a',
  version: n,
  status,
  imageRef: status === 'ready' ? `127.0.0.1:5000/drydock-templates/tpl_a@sha256:${n}` : null,
  imageDigest: null,
  sizeBytes: null,
  error: null,
  builtBy: null,
  createdAt: new Date(),
  finishedAt: null,
});

function setup(env: Record<string, string> = { TEMPLATE_REGISTRY: '127.0.0.1:5000' }, redisReady = true) {
  const versions: TemplateVersionRecord[] = [];
  const queued: unknown[] = [];
  const owned = new Map<string, TemplateRecord>([['ten_a/sqlite', template()], ['shared/base', template({ id: 'tpl_s', tenantId: null, name: 'base' })]]);
  const key = (owner: TemplateOwner, name: string) => `${owner === 'shared' ? 'shared' : owner.tenantId}/${name}`;
  const repository = {
    find: async (owner: TemplateOwner, name: string) => owned.get(key(owner, name)) ?? null,
    addVersion: async (owner: TemplateOwner, name: string) => ({ template: owned.get(key(owner, name)) ?? template({ name }), version: version(versions.length + 1, 'building') }),
    versions: async () => versions,
    version: async (_id: string, n: number) => versions.find((v) => v.version === n) ?? null,
    newestReady: async () => [...versions].reverse().find((v) => v.status === 'ready') ?? null,
  } as unknown as TemplatesRepository;
  const queue = {
    assertReady: () => {
      if (!redisReady) throw new ServiceUnavailableError('redis');
    },
    enqueue: async (job: unknown) => void queued.push(job),
  } as unknown as TemplateBuildQueue;
  const sut = new TemplatesService(makeConfig(env), repository, queue, {} as TemplateBuildLogs);
  return { sut, versions, queued };
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DrydockError) return { code: error.code, status: error.status, message: error.message };
    throw error;
  }
  throw new Error('not refused');
}

describe(TemplatesService.name, () => {
  const ok = { name: 'sqlite', dockerfile: 'FROM drydock\nRUN true\n' };

  it('should queue a new version of a valid template', async () => {
    const { sut, queued } = setup();
    expect(await sut.create({ tenantId: 'ten_a' }, ok)).toEqual({ name: 'sqlite', version: 1, status: 'building' });
    expect(queued).toEqual([{ templateId: 'tpl_a', version: 1 }]);
  });

  it('should refuse what is over its bounds, badly named, or without a registry, recording nothing', async () => {
    const { sut, queued } = setup({ TEMPLATE_REGISTRY: '127.0.0.1:5000', TEMPLATE_MAX_CONTEXT_FILES: '2', TEMPLATE_MAX_CONTEXT_BYTES: '100' });
    const owner = { tenantId: 'ten_a' };
    expect(await refusal(sut.create(owner, { ...ok, files: { a: '1', b: '2', c: '3' } }))).toMatchObject({ code: 'TEMPLATE_CONTEXT_TOO_LARGE', status: 413 });
    expect(await refusal(sut.create(owner, { ...ok, files: { a: 'x'.repeat(200) } }))).toMatchObject({ code: 'TEMPLATE_CONTEXT_TOO_LARGE' });
    for (const path of ['../up', '/abs', 'a/./b', 'Dockerfile']) {
      expect([path, (await refusal(sut.create(owner, { ...ok, files: { [path]: 'x' } }))).code]).toEqual([path, 'INVALID_TEMPLATE_CONTEXT']);
    }
    expect(await refusal(sut.create(owner, { ...ok, files: { a: 'x', 'a/b': 'y' } }))).toMatchObject({ code: 'INVALID_TEMPLATE_CONTEXT', message: expect.stringContaining('"a" is a file and the folder of "a/b"') });
    expect(await refusal(sut.create(owner, { ...ok, name: 'Bad Name' }))).toMatchObject({ code: 'INVALID_TEMPLATE', status: 400 });
    expect(await refusal(sut.create(owner, { ...ok, dockerfile: 'FROM ubuntu' }))).toMatchObject({ code: 'INVALID_DOCKERFILE', status: 400 });
    expect(await refusal(setup({}).sut.create(owner, ok))).toMatchObject({ code: 'TEMPLATES_UNAVAILABLE', status: 503 });
    expect(await refusal(setup(undefined, false).sut.create(owner, ok))).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(queued).toEqual([]);
  });

  it('should resolve a name to its newest ready version, and say why one is not ready', async () => {
    const { sut, versions } = setup();
    const a = 'ten_a';
    expect(await refusal(sut.resolve(a, 'sqlite'))).toMatchObject({ code: 'TEMPLATE_NOT_READY', status: 409, message: 'Template "sqlite" is not ready: none of its versions built.' });
    versions.push(version(1, 'building'));
    expect((await refusal(sut.resolve(a, 'sqlite'))).message).toBe('Template "sqlite" is not ready: version 1 is still building.');
    versions.push(version(2, 'ready'), version(3, 'failed'));
    expect(await sut.resolve(a, 'sqlite')).toMatchObject({ ref: 'sqlite:2', imageRef: '127.0.0.1:5000/drydock-templates/tpl_a@sha256:2' });
    expect((await refusal(sut.resolve(a, 'sqlite:3'))).message).toBe('Template "sqlite:3" is not ready: version 3 failed to build.');
    expect(await refusal(sut.resolve(a, 'sqlite:9'))).toMatchObject({ code: 'TEMPLATE_NOT_FOUND', status: 404 });
    // Another tenant's name is not found; a shared one is anyone's.
    expect(await refusal(sut.resolve('ten_b', 'sqlite'))).toMatchObject({ code: 'TEMPLATE_NOT_FOUND' });
    expect(await refusal(sut.resolve(a, 'bad ref'))).toMatchObject({ code: 'INVALID_TEMPLATE' });
    await expect(sut.assertVisible('ten_b', 'base:1')).resolves.toBeUndefined();
  });
});

import type { TemplateBuildOutcome, TemplateBuildRequest, TemplateImageBuilder } from '@drydock/execution';
import { makeConfig } from '../../../test/factories/config.factory.js';
import { FakeRuntime, okOutcome } from '../../../test/fakes/fake-sandbox.js';
import { TemplateBuildRunner } from './template-build-runner.js';
import type { TemplateBuildLogs } from './template-build-logs.js';
import type { TemplateBuildResult, TemplatesRepository } from './templates.repository.js';

const SELF_TEST_ANSWER = 'drydock-self-test 10001 /session 42\n';

// The builder as the runner sees it: its outcome scripted, what it was asked recorded.
class FakeBuilder implements Pick<TemplateImageBuilder, 'build' | 'push' | 'removeImage'> {
  outcome: TemplateBuildOutcome = { ok: true, imageId: 'sha256:img', sizeBytes: 1_500_000_000, addedBytes: 70_000_000 };
  pushed: string[] = [];
  removed: string[] = [];
  requests: TemplateBuildRequest[] = [];
  async build(request: TemplateBuildRequest, onLog: (line: string) => void) {
    this.requests.push(request);
    onLog('Step 1/2 : FROM drydock');
    return this.outcome;
  }
  async push(imageId: string, repository: string, tag: string) {
    this.pushed.push(`${repository}:${tag}`);
    return { imageRef: `127.0.0.1:5000/${repository}@sha256:dd`, digest: 'sha256:dd' };
  }
  async removeImage(image: string) {
    this.removed.push(image);
    return true;
  }
}

function setup(template: { deleted?: boolean } = {}) {
  const finished: TemplateBuildResult[] = [];
  const lines: string[] = [];
  const ends: { status: string; error: string | null }[] = [];
  let claimed = true;
  const repository = {
    buildInput: async () => ({
      template: { id: 'tpl_a', tenantId: 'ten_a', name: 'sqlite', description: null, poolSize: 0, createdAt: new Date(), deleted: template.deleted ?? false },
      version: {} as never,
      dockerfile: 'FROM drydock\nRUN true\n',
      files: { 'a.txt': 'x' },
    }),
    startBuild: async () => claimed,
    finishBuild: async (_id: string, _version: number, result: TemplateBuildResult) => {
      finished.push(result);
      return true;
    },
  } as unknown as TemplatesRepository;
  const logs = {
    append: async (_id: string, _v: number, more: string[]) => void lines.push(...more),
    finish: async (_id: string, _v: number, status: string, error: string | null) => void ends.push({ status, error }),
  } as unknown as TemplateBuildLogs;
  const builder = new FakeBuilder();
  const runtime = new FakeRuntime();
  runtime.behaviour = async () => okOutcome({ stdout: SELF_TEST_ANSWER });
  const sut = new TemplateBuildRunner(makeConfig(), repository, builder as unknown as TemplateImageBuilder, runtime, logs);
  return { sut, builder, runtime, finished, lines, ends, unclaim: () => (claimed = false) };
}

describe(TemplateBuildRunner.name, () => {
  it('should build, self-test in a sandbox of the image, push, and record the version ready with its log', async () => {
    const { sut, builder, runtime, finished, lines, ends } = setup();
    expect(await sut.run({ templateId: 'tpl_a', version: 3 })).toBe('ready');
    expect(builder.requests).toEqual([{ templateId: 'tpl_a', name: 'sqlite', version: 3, dockerfile: 'FROM drydock\nRUN true\n', files: { 'a.txt': 'x' } }]);
    // The self-test sandbox: the built image, no tenant, destroyed after.
    expect(runtime.specs[0]).toMatchObject({ image: 'sha256:img', tenantId: 'none', storage: 'tmpfs' });
    expect(runtime.created[0]!.alive).toBe(false);
    expect(builder.pushed).toEqual(['drydock-templates/tpl_a:3']);
    expect(finished).toEqual([
      { status: 'ready', imageRef: '127.0.0.1:5000/drydock-templates/tpl_a@sha256:dd', imageDigest: 'sha256:dd', sizeBytes: 1_500_000_000, log: expect.stringContaining('drydock: self-test passed') },
    ]);
    expect(lines[0]).toBe('Step 1/2 : FROM drydock');
    expect(lines.at(-1)).toBe('drydock: ready as sqlite:3 (sha256:dd)');
    expect(ends).toEqual([{ status: 'ready', error: null }]);
  });

  it("should record the builder's failure, with nothing pushed", async () => {
    const { sut, builder, finished, ends } = setup();
    builder.outcome = { ok: false, error: "step 2/2 (RUN make) failed: The command '/bin/sh -c make' returned a non-zero code: 2" };
    expect(await sut.run({ templateId: 'tpl_a', version: 1 })).toBe('failed');
    expect(builder.pushed).toEqual([]);
    expect(finished[0]).toMatchObject({ status: 'failed', error: builder.outcome.error });
    expect(ends).toEqual([{ status: 'failed', error: builder.outcome.error }]);
  });

  it('should fail an image whose sandbox does not answer the self-test, and remove it', async () => {
    const { sut, builder, runtime, finished } = setup();
    runtime.behaviour = async () => okOutcome({ stdout: 'drydock-self-test 0 / 42\n' });
    expect(await sut.run({ templateId: 'tpl_a', version: 1 })).toBe('failed');
    expect(builder.removed).toEqual(['sha256:img']);
    expect(builder.pushed).toEqual([]);
    expect((finished[0] as { error: string }).error).toMatch(/^The image did not pass the platform's self-test: the test cell ended ok with/);
  });

  it('should not build a version another worker claimed, nor one of a deleted template', async () => {
    const claimedElsewhere = setup();
    claimedElsewhere.unclaim();
    expect(await claimedElsewhere.sut.run({ templateId: 'tpl_a', version: 1 })).toBe('skipped');
    expect(claimedElsewhere.builder.requests).toEqual([]);

    const deleted = setup({ deleted: true });
    expect(await deleted.sut.run({ templateId: 'tpl_a', version: 1 })).toBe('failed');
    expect(deleted.builder.requests).toEqual([]);
    expect(deleted.finished[0]).toMatchObject({ status: 'failed', error: 'The template was deleted before its build started.' });
  });
});

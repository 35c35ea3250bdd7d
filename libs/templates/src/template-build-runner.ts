import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, TEMPLATE_IMAGE_BUILDER, type SandboxRuntime, type TemplateImageBuilder } from '@drydock/execution';
import { MAX_LOG_LINES, TemplateBuildLogs } from './template-build-logs.js';
import type { TemplateBuildJobData } from './template-build-queue.js';
import { templateRepository } from './template-ref.js';
import { TEMPLATES_REPOSITORY, type TemplateBuildResult, type TemplatesRepository } from './templates.repository.js';

const LOG_FLUSH_MS = 200;
// The self-test: a cell, in a sandbox started from the image as any session's is, that
// answers only if the supervisor runs it as the sandbox user in /session.
const SELF_TEST_CODE = 'import os\nprint("drydock-self-test", os.getuid(), os.getcwd(), 6 * 7)';
const SELF_TEST_ANSWER = 'drydock-self-test 10001 /session 42';

// A worker's side of a template build (TEMPLATE_BUILD_QUEUE): the image built by the
// TemplateImageBuilder, a self-test, the push to the registry, and the version recorded
// ready or failed. Its log goes to TemplateBuildLogs as it comes.
@Injectable()
export class TemplateBuildRunner {
  private readonly logger = new Logger(TemplateBuildRunner.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TEMPLATES_REPOSITORY) private readonly templates: TemplatesRepository,
    @Inject(TEMPLATE_IMAGE_BUILDER) private readonly builder: TemplateImageBuilder,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    private readonly logs: TemplateBuildLogs,
  ) {}

  // `stop`: aborted when the worker cannot wait for the build (a drain out of time).
  async run({ templateId, version }: TemplateBuildJobData, stop?: AbortSignal): Promise<TemplateBuildResult['status'] | 'skipped'> {
    const input = await this.templates.buildInput(templateId, version);
    if (!input || !(await this.templates.startBuild(templateId, version, this.config.worker.id))) return 'skipped';
    const kept: string[] = [];
    let unsent: string[] = [];
    const log = (line: string) => {
      kept.push(line);
      if (kept.length > MAX_LOG_LINES) kept.shift();
      unsent.push(line);
    };
    let sending = Promise.resolve();
    const flush = () => {
      const lines = unsent;
      unsent = [];
      sending = sending.then(() => this.logs.append(templateId, version, lines)).catch((error: Error) => this.logger.warn(`build log of ${templateId}:${version}: ${error.message}`));
      return sending;
    };
    const flusher = setInterval(flush, LOG_FLUSH_MS);
    const timeout = AbortSignal.timeout(this.config.templates.buildTimeoutMs);
    const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
    let result: TemplateBuildResult;
    const failed = (error: string): TemplateBuildResult => ({ status: 'failed', error, log: '' });
    try {
      if (input.template.deleted) {
        result = failed('The template was deleted before its build started.');
      } else {
        const outcome = await this.builder.build(
          { templateId, name: input.template.name, version, dockerfile: input.dockerfile, files: input.files },
          log,
          signal,
        );
        if (!outcome.ok) {
          result = failed(outcome.error);
        } else {
          log('drydock: self-test: a sandbox from the image runs a cell');
          const problem = await this.selfTest(outcome.imageId);
          if (problem) {
            await this.builder.removeImage(outcome.imageId).catch(() => false);
            result = failed(`The image did not pass the platform's self-test: ${problem}.`);
          } else {
            log('drydock: self-test passed');
            const pushed = await this.builder.push(outcome.imageId, templateRepository(templateId), String(version), log);
            log(`drydock: ready as ${input.template.name}:${version} (${pushed.digest})`);
            result = { status: 'ready', imageRef: pushed.imageRef, imageDigest: pushed.digest, sizeBytes: outcome.sizeBytes, log: '' };
          }
        }
      }
    } catch (error) {
      result = failed(`The build failed on the worker: ${(error as Error).message}`);
    }
    if (result.status === 'failed') log(`drydock: failed: ${result.error}`);
    clearInterval(flusher);
    await flush();
    result.log = kept.join('\n');
    await this.templates.finishBuild(templateId, version, result);
    await this.logs.finish(templateId, version, result.status, result.status === 'failed' ? result.error : null);
    this.logger.log(`template ${templateId} version ${version}: ${result.status}`);
    return result.status;
  }

  // Null when a sandbox of the image started, ran the cell and stopped; else what failed.
  private async selfTest(imageId: string): Promise<string | null> {
    let sandbox;
    try {
      sandbox = await this.runtime.create({
        sessionId: `tpltest-${randomBytes(6).toString('hex')}`,
        tenantId: 'none',
        threadId: 'none',
        workerId: this.config.worker.id,
        limits: this.config.defaultLimits,
        storage: 'tmpfs',
        image: imageId,
      });
    } catch (error) {
      return `a sandbox of it did not start (${(error as Error).message})`;
    }
    try {
      const outcome = await sandbox.run({ id: `selftest-${randomBytes(6).toString('hex')}`, code: SELF_TEST_CODE, timeoutMs: 30_000, maxOutputBytes: 64 * 1024 });
      if (outcome.status !== 'ok' || outcome.stdout.trim() !== SELF_TEST_ANSWER) {
        return `the test cell ended ${outcome.status} with ${JSON.stringify((outcome.stdout + outcome.stderr).slice(0, 500))}, not ${JSON.stringify(SELF_TEST_ANSWER)}`;
      }
      return null;
    } catch (error) {
      return `the test cell did not run (${(error as Error).message})`;
    } finally {
      await sandbox.destroy().catch(() => undefined);
    }
  }
}

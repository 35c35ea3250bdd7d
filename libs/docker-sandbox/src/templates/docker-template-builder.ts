import { Inject, Injectable, Logger } from '@nestjs/common';
import Docker from 'dockerode';
import { extract, pack } from 'tar-stream';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import type { TemplateBuildOutcome, TemplateBuildRequest, TemplateImageBuilder } from '@drydock/execution';
import { checkDockerfile, substituteBase, TEMPLATE_REPOSITORY_PREFIX } from '@drydock/templates';
import { SANDBOX_COMMAND, SANDBOX_UID } from '../container-spec.js';
import { PlatformRuntimeVolumes } from './platform-runtime-volume.js';

// The labels of the containers builds make (the finalize container, the one that reads a
// file of the steps' image, the one that fills a runtime volume).
const BUILD_ROLES = new Set(['template-finalize', 'template-build', 'platform-runtime-fill']);
// The manifest types a pushed template has (Docker's v2 schema 2, or OCI).
const MANIFEST_TYPES = 'application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json';
// Lines of a failing step's output its error quotes.
const FAILED_STEP_LINES = 20;
// Variables of a template's image that would reach the supervisor (the loader's, glibc's)
// or speak for the platform: refused unless they are the platform image's own.
const PLATFORM_ENV = /^(LD_[A-Z_]*|DRYDOCK_[A-Z0-9_]*|GLIBC_TUNABLES|GCONV_PATH|LOCPATH|MALLOC_[A-Z_]*|HOSTALIASES|RES_OPTIONS|TZDIR)$/;
// Where the finalize container mounts the platform's /opt/drydock: a path of its own (the
// template's /opt/drydock is what finalize_image.py repairs).
const FINALIZE_MOUNT = '/drydock-platform';

interface BuildEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string; Digest?: string };
  status?: string;
  progress?: string;
  id?: string;
}

// Template images through the engine's own (classic) build API: the template's
// Dockerfile on the platform's image, then the platform's final layer over it
// (docs/decisions/016-template-registry.md), then checks of what the image says; pushed
// to TEMPLATE_REGISTRY by the engine.
@Injectable()
export class DockerTemplateBuilder implements TemplateImageBuilder {
  private readonly logger = new Logger(DockerTemplateBuilder.name);
  private readonly docker: Docker;
  private network: Promise<string> | null = null;
  private readonly runtimes: PlatformRuntimeVolumes;
  private readonly bases = new Map<string, Promise<string>>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.docker = new Docker({ socketPath: config.docker.socketPath });
    this.runtimes = new PlatformRuntimeVolumes(this.docker);
  }

  async build(request: TemplateBuildRequest, onLog: (line: string) => void, signal: AbortSignal): Promise<TemplateBuildOutcome> {
    const platform = await this.docker.getImage(this.config.docker.sandboxImage).inspect();
    const check = checkDockerfile(request.dockerfile);
    if (check.problems.length > 0) return { ok: false, error: `The Dockerfile cannot be built: ${check.problems.join('; ')}.` };
    const dockerfile = substituteBase(request.dockerfile, check.baseRefs, await this.stepsBase(platform.Id));
    onLog(`drydock: building ${request.name}:${request.version} on the platform image ${platform.Id.slice(7, 19)}`);
    const steps = await this.runBuild(contextOf(dockerfile, request.files), await this.buildOptions(), onLog, signal);
    if ('error' in steps) return { ok: false, error: steps.error };

    const preload = await this.readFile(steps.imageId, '/etc/ld.so.preload');
    if (preload?.trim()) onLog(`drydock: the template's /etc/ld.so.preload is removed (it preloaded ${preload.trim().slice(0, 200)})`);
    onLog('drydock: adding the platform layer');
    const finalized = await this.finalize(steps.imageId, platform.Id, onLog, signal);
    if ('error' in finalized) return { ok: false, error: `The platform layer could not be added: ${finalized.error}` };
    const final = { imageId: await this.commitSettings(finalized.containerId, imageSettings(request, platform.Id)) };
    onLog('drydock: image settings: ENTRYPOINT [], CMD the supervisor, USER 10001, WORKDIR /session, no HEALTHCHECK');

    const image = await this.docker.getImage(final.imageId).inspect();
    const refused = refusedConfig(image, platform);
    if (refused.length > 0) {
      await this.removeImage(final.imageId);
      return { ok: false, error: `The image cannot be used: ${refused.join('; ')}.` };
    }
    const addedBytes = Math.max(0, image.Size - platform.Size);
    const maxAdded = this.config.templates.maxAddedImageMb * 1024 * 1024;
    if (addedBytes > maxAdded) {
      await this.removeImage(final.imageId);
      return { ok: false, error: `The template adds ${mb(addedBytes)} MB to the platform image, more than the ${this.config.templates.maxAddedImageMb} MB allowed.` };
    }
    onLog(`drydock: image ${final.imageId.slice(7, 19)}, ${mb(image.Size)} MB (${mb(addedBytes)} MB over the platform image)`);
    return { ok: true, imageId: final.imageId, sizeBytes: image.Size, addedBytes };
  }

  // The platform's final step on the template's image: finalize_image.py run as root
  // in a container of it, on the platform's runtime from its volume (read-only; nothing
  // of the template's runs: an empty /etc/ld.so.preload is put in before the start, the
  // loader and its libraries are the volume's, LD_* are empty). No network, no
  // capability but owning and changing files. The container is then committed.
  private async finalize(
    stepsImage: string,
    platformImage: string,
    onLog: (line: string) => void,
    signal: AbortSignal,
  ): Promise<{ containerId: string } | { error: string }> {
    const volume = await this.runtimes.ensure(platformImage);
    const runtime = FINALIZE_MOUNT;
    const container: Docker.Container = await this.docker.createContainer({
      Image: stepsImage,
      Entrypoint: [`${runtime}/runtime/sys/ld.so`, '--library-path', `${runtime}/runtime/sys`, `${runtime}/runtime/bin/python3`, '-I', '-S'],
      Cmd: [`${runtime}/finalize/finalize_image.py`],
      User: '0:0',
      WorkingDir: '/',
      Env: ['LD_PRELOAD=', 'LD_LIBRARY_PATH=', 'LD_AUDIT=', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin'],
      NetworkDisabled: true,
      Labels: { 'drydock.role': 'template-finalize' },
      HostConfig: {
        NetworkMode: 'none',
        Mounts: [{ Type: 'volume', Source: volume, Target: runtime, ReadOnly: true, VolumeOptions: { NoCopy: true } as never }],
        CapDrop: ['ALL'],
        CapAdd: ['CHOWN', 'FOWNER', 'DAC_OVERRIDE'],
        SecurityOpt: ['no-new-privileges:true'],
        Memory: 512 * 1024 * 1024,
        PidsLimit: 64,
      },
    });
    try {
      await container.putArchive(emptyPreload(), { path: '/' });
      await container.start();
      const exit = (await Promise.race([
        container.wait(),
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error(this.stopped(signal))), { once: true })),
      ])) as { StatusCode: number };
      const output = await this.containerOutput(container);
      for (const line of output) onLog(line);
      if (exit.StatusCode !== 0) return { error: output.filter((l) => l.startsWith('drydock: ')).at(-1) ?? `finalize_image.py exited with ${exit.StatusCode}` };
      return { containerId: container.id };
    } catch (error) {
      await container.remove({ force: true }).catch(() => undefined);
      if (signal.aborted) return { error: this.stopped(signal) };
      throw error;
    }
  }

  private async containerOutput(container: Docker.Container): Promise<string[]> {
    const raw = (await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    // Multiplexed frames: an 8-byte header (stream, 0, 0, 0, length) then the bytes.
    const chunks: Buffer[] = [];
    for (let at = 0; at + 8 <= raw.length; ) {
      const length = raw.readUInt32BE(at + 4);
      chunks.push(raw.subarray(at + 8, at + 8 + length));
      at += 8 + length;
    }
    return Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l !== '');
  }

  // The finalize container as an image with these settings (its layer: what
  // finalize_image.py changed); the container goes.
  private async commitSettings(containerId: string, settings: ReturnType<typeof imageSettings>): Promise<string> {
    const container = this.docker.getContainer(containerId);
    try {
      const committed = (await container.commit({ _query: { container: containerId, pause: false }, _body: settings } as never)) as unknown as { Id: string };
      return committed.Id;
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  // A file of an image, read from a container created (never started) from it; null
  // when there is none.
  private async readFile(imageId: string, path: string): Promise<string | null> {
    const container = await this.docker.createContainer({ Image: imageId, Cmd: ['/nonexistent'], NetworkDisabled: true, Labels: { 'drydock.role': 'template-build' } });
    try {
      const archive = (await container.getArchive({ path })) as NodeJS.ReadableStream;
      const untar = extract();
      let text: string | null = null;
      untar.on('entry', (header, stream, next) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: unknown) => {
          if (chunks.length < 64) chunks.push(chunk as Buffer);
        });
        stream.on('end', () => {
          if (header.type === 'file' && text === null) text = Buffer.concat(chunks).toString('utf8');
          next();
        });
        stream.resume();
      });
      archive.pipe(untar);
      await new Promise<void>((resolve, reject) => {
        untar.on('finish', resolve);
        untar.on('error', reject);
      });
      return text;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw error;
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  // What `FROM drydock` builds on: the platform image with root as the user, so that
  // a template's steps run as root (apt-get, pip) as in any Dockerfile; the final layer
  // makes the sandbox user the image's user again. Built once per platform image.
  private stepsBase(platformId: string): Promise<string> {
    let pending = this.bases.get(platformId);
    if (!pending) {
      pending = (async () => {
        const tag = `drydock/template-base:${platformId.slice(7, 19)}`;
        const existing = await this.docker.getImage(tag).inspect().catch(() => null);
        if (existing?.Config.Labels?.['drydock.platform-image'] === platformId) return existing.Id;
        const built = await this.runBuild(
          contextOf(`FROM ${platformId}\nUSER 0:0\nLABEL drydock.platform-image=${JSON.stringify(platformId)}\n`, {}),
          { ...(await this.buildOptions()), nocache: false, t: tag, networkmode: 'none' },
          () => undefined,
          AbortSignal.timeout(60_000),
        );
        if ('error' in built) throw new Error(`the template base could not be built: ${built.error}`);
        return built.imageId;
      })();
      pending.catch(() => this.bases.delete(platformId));
      this.bases.set(platformId, pending);
    }
    return pending;
  }

  private async buildOptions() {
    const { buildMemoryMb } = this.config.templates;
    const memory = buildMemoryMb * 1024 * 1024;
    return {
      rm: true,
      forcerm: true,
      pull: false,
      // No layer cache: the engine's cache is shared by every build on it, so one
      // tenant's layer (a `RUN pip install x` against a mirror it controlled) would be
      // another's for the same line, and "Using cache" would tell a tenant what another
      // built.
      nocache: true,
      memory,
      memswap: memory,
      networkmode: await this.buildNetwork(),
      // Nothing from the worker: no build argument, no credentials.
      buildargs: {},
    };
  }

  // The network of RUN steps: TEMPLATE_BUILD_NETWORK, created once when missing as a
  // bridge whose containers cannot reach each other.
  private buildNetwork(): Promise<string> {
    const name = this.config.templates.buildNetwork;
    if (name === 'none') return Promise.resolve('none');
    this.network ??= (async () => {
      const existing = await this.docker.listNetworks({ filters: { name: [name] } });
      if (!existing.some((n) => n.Name === name)) {
        await this.docker
          .createNetwork({ Name: name, Driver: 'bridge', Options: { 'com.docker.network.bridge.enable_icc': 'false' }, Labels: { 'drydock.role': 'template-builds' } })
          .catch((error: { statusCode?: number }) => {
            if (error.statusCode !== 409) throw error;
          });
      }
      return name;
    })().catch((error) => {
      this.network = null;
      throw error;
    });
    return this.network;
  }

  // One build through the engine; its output goes to onLog line by line as it comes.
  private async runBuild(
    context: NodeJS.ReadableStream,
    options: Record<string, unknown>,
    onLog: (line: string) => void,
    signal: AbortSignal,
  ): Promise<{ imageId: string } | { error: string }> {
    let step = null as string | null;
    let stepOutput: string[] = [];
    let imageId: string | null = null;
    let failure: string | null = null;
    let partial = '';
    const onEvent = (event: BuildEvent) => {
      if (event.stream !== undefined) {
        const lines = (partial + event.stream).split('\n');
        partial = lines.pop() ?? '';
        for (const raw of lines) {
          // The engine colours a step's stderr; the log is plain text.
          const line = raw.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').replace(/\r/g, '');
          if (/^Step \d+\/\d+ : /.test(line)) {
            step = line;
            stepOutput = [];
          } else if (!/^ ---> /.test(line) && !/^Removing intermediate container /.test(line)) {
            stepOutput.push(line);
            if (stepOutput.length > FAILED_STEP_LINES) stepOutput.shift();
          }
          onLog(line);
        }
      }
      if (event.aux?.ID) imageId = event.aux.ID;
      if (event.error) {
        failure = event.errorDetail?.message ?? event.error;
        onLog(`error: ${failure}`);
      }
    };
    let stream: NodeJS.ReadableStream;
    try {
      stream = await this.docker.buildImage(context, { ...options, abortSignal: signal } as Docker.ImageBuildOptions);
    } catch (error) {
      return { error: signal.aborted ? this.stopped(signal) : `the engine refused the build: ${(error as Error).message}` };
    }
    const finished = await new Promise<Error | null>((resolve) => {
      const onAbort = () => (stream as unknown as { destroy?: (e?: Error) => void }).destroy?.(new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      this.docker.modem.followProgress(
        stream,
        (error: Error | null) => {
          signal.removeEventListener('abort', onAbort);
          resolve(error);
        },
        onEvent,
      );
    });
    if (partial) onEvent({ stream: '\n' });
    if (signal.aborted) return { error: this.stopped(signal) };
    if (failure || finished || !imageId) {
      const why = failure ?? finished?.message ?? 'the engine ended the build without an image';
      const output = stepOutput.filter((l) => l.trim() !== '').join('\n');
      return { error: step ? `${step.replace(/^Step (\d+\/\d+) : /, 'step $1 (')}) failed: ${why}${output ? `\n${output}` : ''}` : why };
    }
    return { imageId };
  }

  private stopped(signal: AbortSignal): string {
    const reason = signal.reason as Error | undefined;
    if (reason?.name === 'TimeoutError') {
      return `the build took longer than ${Math.round(this.config.templates.buildTimeoutMs / 1000)} s, its limit, and was stopped`;
    }
    return `the build was stopped: ${reason?.message ?? 'cancelled'}`;
  }

  async push(imageId: string, repository: string, tag: string, onLog: (line: string) => void): Promise<{ imageRef: string; digest: string }> {
    const registry = this.config.templates.registry;
    if (!registry) throw new Error('TEMPLATE_REGISTRY is not set');
    const repo = `${registry}/${repository}`;
    await this.docker.getImage(imageId).tag({ repo, tag });
    onLog(`drydock: pushing ${repo}:${tag}`);
    const stream = await this.docker.getImage(`${repo}:${tag}`).push({ tag });
    let digest: string | null = null;
    let failure: string | null = null;
    await new Promise<void>((resolve, reject) =>
      this.docker.modem.followProgress(
        stream,
        (error: Error | null) => (error ? reject(error) : resolve()),
        (event: BuildEvent) => {
          if (event.aux?.Digest) digest = event.aux.Digest;
          if (event.error) failure = event.errorDetail?.message ?? event.error;
          if (event.status && !event.progress) onLog(`${event.id ? `${event.id}: ` : ''}${event.status}`);
        },
      ),
    );
    if (failure || !digest) throw new Error(`the push to ${registry} failed: ${failure ?? 'no digest came back'}`);
    return { imageRef: `${repo}@${digest}`, digest };
  }

  // Every reference to the image goes with it (its tag and its digest), unless a
  // container (running or not) was made from it.
  async removeImage(image: string): Promise<boolean> {
    let id: string;
    try {
      id = (await this.docker.getImage(image).inspect()).Id;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return true;
      throw error;
    }
    const users = await this.docker.listContainers({ all: true, filters: { ancestor: [id] } });
    if (users.length > 0) return false;
    try {
      await this.docker.getImage(id).remove({ force: true });
      return true;
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status === 404) return true;
      if (status === 409) return false;
      throw error;
    }
  }

  async deleteFromRegistry(imageRef: string): Promise<void> {
    const match = /^([^/]+)\/(.+)@(sha256:[0-9a-f]{64})$/.exec(imageRef);
    if (!match) throw new Error(`not an image reference by digest: ${imageRef}`);
    const [, host, repository, digest] = match;
    const base = (this.config.templates.registryApiUrl ?? `http://${host}`).replace(/\/+$/, '');
    const response = await fetch(`${base}/v2/${repository}/manifests/${digest}`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
    if (response.status !== 202 && response.status !== 404) {
      throw new Error(`the registry answered ${response.status} to deleting ${imageRef}: ${(await response.text()).slice(0, 200)}`);
    }
  }

  async registryRepositories(): Promise<string[]> {
    const repositories: string[] = [];
    for (let path: string | null = '/v2/_catalog?n=1000'; path; ) {
      const response: Response = await this.registryGet(path);
      repositories.push(...(((await response.json()) as { repositories?: string[] }).repositories ?? []));
      // Pagination: Link: </v2/_catalog?last=…&n=1000>; rel="next"
      path = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1] ?? null;
    }
    return repositories.filter((r) => r.startsWith(TEMPLATE_REPOSITORY_PREFIX));
  }

  async registryImages(repository: string): Promise<string[]> {
    const response = await this.registryGet(`/v2/${repository}/tags/list`);
    if (response.status === 404) return [];
    const tags = ((await response.json()) as { tags?: string[] | null }).tags ?? [];
    const images: string[] = [];
    for (const tag of tags) {
      const head = await this.registryGet(`/v2/${repository}/manifests/${tag}`, { method: 'HEAD', headers: { accept: MANIFEST_TYPES } });
      const digest = head.headers.get('docker-content-digest');
      if (digest) images.push(`${this.config.templates.registry}/${repository}@${digest}`);
    }
    return images;
  }

  // The registry's API (TEMPLATE_REGISTRY_API_URL, else http://TEMPLATE_REGISTRY); a 404
  // is an answer.
  private async registryGet(path: string, init: RequestInit = {}): Promise<Response> {
    const registry = this.config.templates.registry;
    if (!registry) throw new Error('TEMPLATE_REGISTRY is not set');
    const base = (this.config.templates.registryApiUrl ?? `http://${registry}`).replace(/\/+$/, '');
    const response = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
    if (!response.ok && response.status !== 404) throw new Error(`the registry answered ${response.status} to ${path}`);
    return response;
  }

  async sweepLeftovers(): Promise<number> {
    let removed = 0;
    const oldest = Date.now() - this.config.templates.buildTimeoutMs - 60_000;
    const containers = await this.docker.listContainers({ all: true, filters: { label: [`drydock.role`] } });
    for (const info of containers) {
      if (!BUILD_ROLES.has(info.Labels['drydock.role'] ?? '') || info.Created * 1000 > oldest) continue;
      await this.docker
        .getContainer(info.Id)
        .remove({ force: true })
        .then(() => removed++)
        .catch(() => undefined);
    }
    const current = (await this.docker.getImage(this.config.docker.sandboxImage).inspect().catch(() => null))?.Id;
    const { Volumes } = await this.docker.listVolumes({ filters: { label: ['drydock.role=platform-runtime'] } });
    for (const volume of Volumes ?? []) {
      if (!current || volume.Labels?.['drydock.platform-image'] === current) continue;
      // In use (a session of a template still on it): the engine refuses; next sweep.
      await this.docker
        .getVolume(volume.Name)
        .remove()
        .then(() => removed++)
        .catch(() => undefined);
    }
    return removed;
  }

  async localTemplateImages(): Promise<string[]> {
    const registry = this.config.templates.registry;
    if (!registry) return [];
    const prefix = `${registry}/${TEMPLATE_REPOSITORY_PREFIX}`;
    const images = await this.docker.listImages();
    return images.flatMap((image) => (image.RepoDigests ?? []).filter((ref) => ref.startsWith(prefix)));
  }
}

const mb = (bytes: number) => Math.round(bytes / (1024 * 1024));

// A tar of an empty /etc/ld.so.preload, put into the finalize container before it
// starts: the loader reads that file whatever program it starts.
function emptyPreload(): NodeJS.ReadableStream {
  return tarOf({ 'etc/ld.so.preload': '' });
}

// The build context: the Dockerfile and the template's files.
function contextOf(dockerfile: string, files: Record<string, string>): NodeJS.ReadableStream {
  return tarOf({ Dockerfile: dockerfile, ...files });
}

// A tar of text files (path -> content), each 0644.
function tarOf(files: Record<string, string>): NodeJS.ReadableStream {
  const tar = pack();
  for (const [path, content] of Object.entries(files)) tar.entry({ name: path, mode: 0o644 }, content);
  tar.finalize();
  return tar as unknown as NodeJS.ReadableStream;
}

// The image's configuration after the final layer, whatever the template's said: as a
// container's, which a commit makes the image's. `Entrypoint: []` (not absent) keeps the
// template's from being inherited.
function imageSettings(request: TemplateBuildRequest, platformImage: string) {
  return {
    Entrypoint: [] as string[],
    Cmd: SANDBOX_COMMAND,
    User: `${SANDBOX_UID}:${SANDBOX_UID}`,
    WorkingDir: '/session',
    Healthcheck: { Test: ['NONE'] },
    StopSignal: 'SIGTERM',
    Labels: { 'drydock.template.id': request.templateId, 'drydock.template.version': String(request.version), 'drydock.platform-image': platformImage },
  };
}

// What the built image's configuration says that the platform does not allow.
function refusedConfig(image: Docker.ImageInspectInfo, platform: Docker.ImageInspectInfo): string[] {
  const refused: string[] = [];
  const platformEnv = new Set(platform.Config.Env ?? []);
  for (const entry of image.Config.Env ?? []) {
    const name = entry.split('=')[0]!;
    if (PLATFORM_ENV.test(name) && !platformEnv.has(entry) && !/^LD_(PRELOAD|LIBRARY_PATH|AUDIT)=$/.test(entry)) {
      refused.push(`it sets ${name}, which a template may not set`);
    }
  }
  if (Object.keys(image.Config.Volumes ?? {}).length > 0) refused.push('it declares volumes');
  if ((image.Config.OnBuild ?? []).length > 0) refused.push('it has ONBUILD triggers');
  return refused;
}

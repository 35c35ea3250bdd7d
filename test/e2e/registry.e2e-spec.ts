import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import tar from 'tar-stream';

const run = promisify(execFile);
const MANIFEST_V2 = 'application/vnd.docker.distribution.manifest.v2+json';

// The template registry (issue 52, part 4) as scripts/test.sh and scripts/start.sh
// start it (ensure_registry: Debian's docker-registry on the loopback, storage under
// var/registry): a real Distribution v2 that this machine's Docker engine pushes to and
// pulls from without TLS, lists in its catalog, and deletes from.
describe('Template registry', () => {
  const registry = process.env.TEMPLATE_REGISTRY;
  const name = `drydock-test/probe-${randomBytes(4).toString('hex')}`;
  const ref = `${registry}/${name}:v1`;
  const api = (path: string, init: RequestInit = {}) => fetch(`http://${registry}/v2/${path}`, init);

  beforeAll(() => {
    if (!registry) throw new Error('TEMPLATE_REGISTRY is not set: run the tests through scripts/test.sh, which starts the registry (ensure_registry)');
  });

  afterAll(async () => {
    await run('docker', ['rmi', '-f', ref]).catch(() => undefined);
  });

  // A one-file image, made here (no registry to pull a base from).
  const importImage = async (tag: string, text: string) => {
    const pack = tar.pack();
    pack.entry({ name: 'probe.txt' }, text);
    pack.finalize();
    const child = spawn('docker', ['import', '-', tag], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    pack.pipe(child.stdin);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`docker import failed: ${stderr}`);
  };

  it('should answer the Distribution v2 API', async () => {
    const res = await api('');
    expect(res.status).toBe(200);
    expect(res.headers.get('docker-distribution-api-version')).toBe('registry/2.0');
  });

  it('should take a push, list it in the catalog, give it back to a pull, and delete it', async () => {
    await importImage(ref, `probe ${name}\n`);
    const pushedId = (await run('docker', ['image', 'inspect', '-f', '{{.Id}}', ref])).stdout.trim();
    await run('docker', ['push', '-q', ref]);
    const catalog = (await (await api('_catalog?n=1000')).json()) as { repositories: string[] };
    expect(catalog.repositories).toContain(name);
    expect(await (await api(`${name}/tags/list`)).json()).toEqual({ name, tags: ['v1'] });

    // Gone from the engine, then back from the registry: the same image.
    await run('docker', ['rmi', '-f', ref]);
    await run('docker', ['pull', '-q', ref]);
    expect((await run('docker', ['image', 'inspect', '-f', '{{.Id}}', ref])).stdout.trim()).toBe(pushedId);

    // Deletes are enabled (a deleted template's versions go): by the manifest's digest.
    const head = await api(`${name}/manifests/v1`, { method: 'HEAD', headers: { accept: MANIFEST_V2 } });
    const digest = head.headers.get('docker-content-digest');
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await api(`${name}/manifests/${digest}`, { method: 'DELETE' })).status).toBe(202);
    expect((await api(`${name}/manifests/v1`, { method: 'HEAD', headers: { accept: MANIFEST_V2 } })).status).toBe(404);
  });
});

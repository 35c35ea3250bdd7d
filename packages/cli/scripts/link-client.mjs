// In this checkout, @drydock/client is the package beside this one, not one from the
// registry: link it as node_modules/@drydock/client, so that tsc compiles the CLI
// against it and a CLI installed from the checkout (npm install -g ./packages/cli, or
// npm link, which link this folder without installing its dependencies) finds it.
// Installed from its tarball, the CLI gets the real dependency instead.
import { lstat, mkdir, readlink, rm, symlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..');
const link = join(cli, 'node_modules', '@drydock', 'client');
const target = relative(dirname(link), join(cli, '..', 'client'));

const current = await lstat(link).catch(() => null);
if (current?.isSymbolicLink() && (await readlink(link)) === target) process.exit(0);
// A copy npm installed (from the client's tarball) is replaced by the checkout's.
if (current) await rm(link, { recursive: true, force: true });
await mkdir(dirname(link), { recursive: true });
await symlink(target, link, 'dir');

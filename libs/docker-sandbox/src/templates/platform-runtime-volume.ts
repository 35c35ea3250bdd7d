import type Docker from 'dockerode';

// Where a template's sandboxes find the platform's runtime and supervisor: a Docker
// volume holding the platform image's /opt/drydock, mounted read-only over the
// template image's own /opt/drydock (docs/decisions/016-template-registry.md). Whatever a
// template's steps did to /opt/drydock, its sandboxes run the platform's files; its
// builds run finalize_image.py from the same volume.
//
// One volume per platform image, made once per engine: Docker fills an empty named
// volume with the image's content at the mount point when a container using it is
// created, so a container of the platform image is created (never started) and removed.
export const PLATFORM_RUNTIME_MOUNT = '/opt/drydock';

const IMAGE_ID_TTL_MS = 10_000;

export function platformRuntimeVolumeName(platformImageId: string): string {
  return `drydock-runtime-${platformImageId.replace(/^sha256:/, '').slice(0, 16)}`;
}

export class PlatformRuntimeVolumes {
  private readonly ready = new Map<string, Promise<string>>();
  private imageId: { ref: string; id: string; at: number } | null = null;

  constructor(private readonly docker: Docker) {}

  // The volume of the image a reference (SANDBOX_IMAGE) names now: its id is asked of
  // the engine again only after IMAGE_ID_TTL_MS (a rebuilt image, a new tag).
  async ensureFor(imageRef: string): Promise<string> {
    if (!this.imageId || this.imageId.ref !== imageRef || Date.now() - this.imageId.at > IMAGE_ID_TTL_MS) {
      this.imageId = { ref: imageRef, id: (await this.docker.getImage(imageRef).inspect()).Id, at: Date.now() };
    }
    return this.ensure(this.imageId.id);
  }

  // The volume of this platform image, made when this engine has none.
  ensure(platformImageId: string): Promise<string> {
    let pending = this.ready.get(platformImageId);
    if (!pending) {
      pending = this.make(platformImageId);
      pending.catch(() => this.ready.delete(platformImageId));
      this.ready.set(platformImageId, pending);
    }
    return pending;
  }

  private async make(platformImageId: string): Promise<string> {
    const name = platformRuntimeVolumeName(platformImageId);
    const existing = await this.docker
      .getVolume(name)
      .inspect()
      .catch((error: { statusCode?: number }) => {
        if (error.statusCode === 404) return null;
        throw error;
      });
    if (existing) return name;
    // The engine copies the image's /opt/drydock into the empty volume while it creates
    // the container (the copy is done when createContainer returns).
    await this.docker.createVolume({ Name: name, Labels: { 'drydock.role': 'platform-runtime', 'drydock.platform-image': platformImageId } });
    const filler = await this.docker.createContainer({
      Image: platformImageId,
      Cmd: ['/nonexistent'],
      NetworkDisabled: true,
      Labels: { 'drydock.role': 'platform-runtime-fill' },
      HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: name, Target: PLATFORM_RUNTIME_MOUNT }] },
    });
    await filler.remove({ force: true }).catch(() => undefined);
    return name;
  }
}

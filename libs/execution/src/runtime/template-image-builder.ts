// The worker's port for template images (docs/templates.md); its Docker implementation
// lives in libs/docker-sandbox. A build is the template's own steps on the platform's
// image, then the platform's final layer; the result is checked, then pushed.
export interface TemplateBuildRequest {
  templateId: string;
  name: string;
  version: number;
  dockerfile: string;
  files: Record<string, string>;
}

export type TemplateBuildOutcome =
  // A local image, with what its steps added to the platform's image.
  | { ok: true; imageId: string; sizeBytes: number; addedBytes: number }
  // `error`: the sentence a person reads (the failing step and its output's end).
  | { ok: false; error: string };

export interface TemplateImageBuilder {
  build(request: TemplateBuildRequest, onLog: (line: string) => void, signal: AbortSignal): Promise<TemplateBuildOutcome>;
  // Pushes the local image as <registry>/<repository>:<tag>; its reference by digest.
  push(imageId: string, repository: string, tag: string, onLog: (line: string) => void): Promise<{ imageRef: string; digest: string }>;
  // Removes a local image (a failed self-test's, a purged template's) if no container
  // uses it; false when one does.
  removeImage(image: string): Promise<boolean>;
  // Deletes a pushed image's manifest from the registry (already gone: fine).
  deleteFromRegistry(imageRef: string): Promise<void>;
  // Local images of templates (pulled or built here), by reference.
  localTemplateImages(): Promise<string[]>;
  // Removes what builds left on this engine: their containers older than a build can
  // last (a worker killed mid-build), and the runtime volumes of platform images other
  // than the current one that no container uses. How many went.
  sweepLeftovers(): Promise<number>;
  // The registry's template repositories, and one's images as references by digest
  // (<registry>/<repository>@<digest>).
  registryRepositories(): Promise<string[]>;
  registryImages(repository: string): Promise<string[]>;
}

export const TEMPLATE_IMAGE_BUILDER = Symbol('TEMPLATE_IMAGE_BUILDER');

import { DockerfileParser, From, Label, ModifiableInstruction, type Instruction } from 'dockerfile-ast';

// What a template's Dockerfile may say (docs/templates.md, "What a template may do").
// Checked when the template is submitted, so a refusal is a 400 naming each problem
// instead of a failed build; the worker checks again before it builds, and rewrites
// `FROM drydock` to the exact image it runs. What the Dockerfile may change inside the
// image (users, the supervisor, setuid bits) is undone by the platform's final layer,
// not refused here.
//
// Refused, each for a reason a template could otherwise break the platform's promises:
// - FROM anything but `drydock` or an earlier stage: every template is the platform's
//   image plus steps, and the build reaches no other registry;
// - COPY/ADD --from anything but an earlier stage: it could read another tenant's
//   image on the worker;
// - ADD of a URL or a git repository: the engine itself fetches it, from the worker's
//   own network;
// - ONBUILD: triggers would run in the platform's final layer;
// - VOLUME: a sandbox's only writable places are /session and /tmp;
// - LABEL drydock.*: the platform's labels name sessions, tenants and workers;
// - a `syntax` parser directive: builds use the engine's own builder, no frontend.
export const BASE_IMAGE_NAME = 'drydock';

export interface DockerfileCheck {
  problems: string[];
  // The FROM lines naming the platform's image: where the worker substitutes it.
  baseRefs: { line: number; start: number; end: number }[];
}

const line = (instruction: Instruction) => instruction.getRange().start.line + 1;

export function checkDockerfile(text: string): DockerfileCheck {
  const problems: string[] = [];
  const baseRefs: DockerfileCheck['baseRefs'] = [];
  const dockerfile = DockerfileParser.parse(text);
  for (const directive of dockerfile.getDirectives()) {
    if (directive.getName()?.toLowerCase() === 'syntax') {
      problems.push(`line ${directive.getRange().start.line + 1}: the "syntax" directive is not supported (templates build with the engine's own builder)`);
    }
  }
  const instructions = dockerfile.getInstructions();
  if (instructions.length === 0) problems.push('it has no instruction; it starts with FROM drydock');
  // Names an earlier stage may be named by: its AS name, and its index.
  const stages: string[] = [];
  let seenFrom = false;
  let fromCount = 0;
  for (const instruction of instructions) {
    const keyword = instruction.getKeyword().toUpperCase();
    const at = `line ${line(instruction)}`;
    if (!seenFrom && keyword !== 'FROM' && keyword !== 'ARG') {
      problems.push(`${at}: ${keyword} comes before FROM; a template starts with FROM drydock`);
      seenFrom = true;
    }
    switch (keyword) {
      case 'FROM': {
        seenFrom = true;
        if (!(instruction instanceof From)) break;
        const from = instruction;
        const image = from.getImage();
        const range = from.getImageRange();
        if (from.getPlatformFlag()) problems.push(`${at}: FROM --platform is not supported`);
        if (!image || !range) {
          problems.push(`${at}: FROM names no image`);
        } else if (image === BASE_IMAGE_NAME) {
          baseRefs.push({ line: range.start.line, start: range.start.character, end: range.end.character });
        } else if (!stages.includes(image.toLowerCase())) {
          problems.push(`${at}: FROM ${image} is not allowed; a template builds FROM ${BASE_IMAGE_NAME} (the platform's image) or an earlier stage`);
        }
        const stage = from.getBuildStage();
        if (stage) stages.push(stage.toLowerCase());
        stages.push(String(fromCount++));
        break;
      }
      case 'COPY':
      case 'ADD': {
        const flags = instruction instanceof ModifiableInstruction ? instruction.getFlags() : [];
        const fromFlag = flags.find((f) => f.getName().toLowerCase() === 'from');
        if (fromFlag) {
          const value = (fromFlag.getValue() ?? '').toLowerCase();
          if (!stages.includes(value) && value !== BASE_IMAGE_NAME) {
            problems.push(`${at}: ${keyword} --from=${fromFlag.getValue()} is not allowed; --from names an earlier stage`);
          }
        }
        if (keyword === 'ADD') {
          const args = instruction.getArguments().map((a) => a.getValue());
          for (const source of args.slice(0, -1)) {
            if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) || /^git@/i.test(source)) {
              problems.push(`${at}: ADD ${source} is not allowed; fetch it in a RUN step (templates reach only approved hosts) or send it as a file`);
            }
          }
        }
        break;
      }
      case 'ONBUILD':
        problems.push(`${at}: ONBUILD is not allowed (its steps would run in the platform's final layer)`);
        break;
      case 'VOLUME':
        problems.push(`${at}: VOLUME is not allowed; a sandbox writes only to /session and /tmp`);
        break;
      case 'LABEL': {
        const keys = instruction instanceof Label ? instruction.getProperties().map((p) => p.getName()) : [];
        for (const key of keys) {
          if (/^["']?drydock\./i.test(key)) problems.push(`${at}: label ${key} is the platform's; drydock.* labels are not allowed`);
        }
        break;
      }
      default:
        break;
    }
  }
  if (baseRefs.length === 0 && problems.length === 0) problems.push(`no stage builds FROM ${BASE_IMAGE_NAME}`);
  return { problems, baseRefs };
}

// The Dockerfile with each `FROM drydock` naming `image` (the platform's image on the
// worker that builds it).
export function substituteBase(text: string, baseRefs: DockerfileCheck['baseRefs'], image: string): string {
  const lines = text.split('\n');
  // From the last one, so that earlier ranges stay right.
  for (const ref of [...baseRefs].sort((a, b) => b.line - a.line || b.start - a.start)) {
    const current = lines[ref.line]!;
    lines[ref.line] = current.slice(0, ref.start) + image + current.slice(ref.end);
  }
  return lines.join('\n');
}

import { z } from 'zod';
import { jsonValueCell, pythonStringLiteral } from './python-literal.js';
import { PythonToolError } from './python-tools.errors.js';
import { PYTHON_TOOL_NAME_PATTERN, SHA256_HEX_PATTERN, sha256OfSource } from './tool-module.js';

// The code the tool node sends to the thread's REPL when the model calls a user-defined
// Python tool. The module runs as a real module (types.ModuleType, registered in
// sys.modules as drydock_tool_<sha[:12]>), so its imports, private helpers and module
// state work as written; it is exec'd once per kernel and reused while the kernel lives
// (a restarted kernel simply loads it again). Source, function name and arguments enter
// the code only as escaped string literals; the arguments are decoded with json.loads.
//
// The cell's value is always one JSON envelope (read it with parsePythonToolCallOutput):
//   {"ok": true, "result": <the return value as JSON>}
//   {"ok": false, "error": {"stage", "type", "message", "traceback"}}
// where stage says what failed: loading the module, finding the function, binding the
// arguments, the call itself, or turning the result into JSON. Failures come back as
// values, not REPL errors, so the tool node can hand them to the model as text. Only an
// interrupt (the run's timeout) escapes as a REPL error.

export interface PythonToolCall {
  source: string;
  sha256: string;
  functionName: string;
  args: Record<string, unknown>;
}

export const PYTHON_TOOL_CALL_STAGES = ['load', 'lookup', 'arguments', 'call', 'result'] as const;
export type PythonToolCallStage = (typeof PYTHON_TOOL_CALL_STAGES)[number];

// Values in a result beyond this many are refused rather than walked: a result that big
// is not something to hand to a model, and a shared-reference structure can be huge.
const MAX_RESULT_VALUES = 1_000_000;

export function buildPythonToolCallCode(call: PythonToolCall): string {
  const { source, sha256, functionName, args } = call;
  if (!PYTHON_TOOL_NAME_PATTERN.test(functionName)) throw PythonToolError.invalidFunctionName(functionName);
  if (!SHA256_HEX_PATTERN.test(sha256)) {
    throw PythonToolError.invalidModule('sha256 must be 64 lowercase hex digits.');
  }
  if (sha256OfSource(source) !== sha256) throw PythonToolError.moduleHashMismatch(`drydock_tool_${sha256.slice(0, 12)}`);
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw PythonToolError.invalidArguments('they must be a JSON object of parameter names to values.');
  }
  let argsJson: string;
  try {
    argsJson = JSON.stringify(args);
  } catch (error) {
    throw PythonToolError.invalidArguments(`they cannot be written as JSON (${(error as Error).message}).`);
  }

  const body = `
import asyncio, dataclasses, enum, inspect, json, linecache, math, sys, traceback, types

sha256 = ${pythonStringLiteral(sha256)}
function_name = ${pythonStringLiteral(functionName)}
module_name = "drydock_tool_" + sha256[:12]
here = inspect.currentframe().f_code.co_filename

def failure(stage, exc):
    # The traceback without this runner's own frames: only the tool's code matters, and
    # for a bad argument (raised inside inspect) only the message does.
    entries = [e for e in traceback.extract_tb(exc.__traceback__) if e.filename != here]
    if stage == "arguments":
        entries = []
    text = "".join(traceback.format_exception_only(type(exc), exc))
    if entries:
        text = "Traceback (most recent call last):\\n" + "".join(traceback.format_list(entries)) + text
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable " + type(exc).__name__ + ">"
    error = {"stage": stage, "type": type(exc).__name__, "message": message, "traceback": text[-8000:]}
    return JsonText(json.dumps({"ok": False, "error": error}, ensure_ascii=False))

module = sys.modules.get(module_name)
if getattr(module, "__drydock_sha256__", None) != sha256:
    source = ${pythonStringLiteral(source)}
    filename = "<" + module_name + ">"
    module = types.ModuleType(module_name)
    module.__file__ = filename
    # Tracebacks show the tool's own lines; mtime None keeps the entry in linecache.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    sys.modules[module_name] = module  # before exec, as import does (dataclasses need it)
    try:
        exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)
    except BaseException as exc:
        sys.modules.pop(module_name, None)  # never keep a half-run module
        if not isinstance(exc, (Exception, SystemExit)):
            raise
        return failure("load", exc)
    module.__drydock_sha256__ = sha256

# Only functions defined by the module itself: not its imports, not its private helpers.
function = module.__dict__.get(function_name)
if not callable(function) or isinstance(function, type) or getattr(function, "__module__", None) != module_name:
    return failure("lookup", LookupError("The tool module defines no public function named " + repr(function_name) + "."))

try:
    kwargs = json.loads(${pythonStringLiteral(argsJson)})
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        signature.bind(**kwargs)
except (Exception, SystemExit) as exc:
    return failure("arguments", exc)

try:
    result = function(**kwargs)
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
except (Exception, SystemExit) as exc:
    return failure("call", exc)

budget = [${MAX_RESULT_VALUES}]

def plain(value, active):
    # JSON-ready copy: NaN and infinities become null, numpy and pandas values their
    # Python equivalents, dates ISO text, dataclasses dicts, anything else str().
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("The result has more than ${MAX_RESULT_VALUES} values; return a smaller result.")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, enum.Enum):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if id(value) in active:
        return "<circular reference>"
    active = active | {id(value)}
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(k)): plain(v, active) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v, active) for v in value]
    if isinstance(value, enum.Enum):
        return plain(value.value, active)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value), active)
    for method in ("tolist", "isoformat"):
        convert = getattr(value, method, None)
        if callable(convert) and not isinstance(value, type):
            return plain(convert(), active)
    return str(value)

try:
    text = json.dumps({"ok": True, "result": plain(result, frozenset())}, ensure_ascii=False, allow_nan=False)
except (Exception, SystemExit) as exc:
    return failure("result", exc)
return JsonText(text)
`;
  return jsonValueCell(
    '_drydock_call_tool',
    `Drydock: call ${functionName} from tool module ${sha256.slice(0, 12)}.`,
    body.trim(),
  );
}

export const pythonToolCallErrorSchema = z.strictObject({
  stage: z.enum(PYTHON_TOOL_CALL_STAGES),
  type: z.string(),
  message: z.string(),
  traceback: z.string(),
});

export const pythonToolCallOutcomeSchema = z.discriminatedUnion('ok', [
  z.strictObject({ ok: z.literal(true), result: z.json() }),
  z.strictObject({ ok: z.literal(false), error: pythonToolCallErrorSchema }),
]);

export type PythonToolCallOutcome = z.infer<typeof pythonToolCallOutcomeSchema>;

// Reads the cell's value (the REPL result's text). Anything else, including a result the
// REPL cut at its size cap, is refused with INVALID_SANDBOX_OUTPUT.
export function parsePythonToolCallOutput(text: string): PythonToolCallOutcome {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw PythonToolError.invalidOutput('tool result', `not JSON (${(error as Error).message}).`);
  }
  const parsed = pythonToolCallOutcomeSchema.safeParse(json);
  if (!parsed.success) throw PythonToolError.invalidOutput('tool result', parsed.error.issues[0]?.message ?? 'invalid.');
  return parsed.data;
}

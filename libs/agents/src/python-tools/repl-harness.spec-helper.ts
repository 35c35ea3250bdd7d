import { spawnSync } from 'node:child_process';

// Runs REPL cells with python3 the way the sandbox kernel does (kernel.py _run_cell):
// one shared namespace, the last expression statement evaluated and shown with repr().
// Test support only; the build compiles it but nothing imports it.
const HARNESS = `
import ast, json, sys
namespace = {"__name__": "__main__"}
out = []
for code in json.loads(sys.stdin.read()):
    try:
        tree = ast.parse(code, "<cell>", "exec")
        last = ast.Expression(tree.body.pop().value) if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<cell>", "exec", dont_inherit=True), namespace)
        value = eval(compile(last, "<cell>", "eval", dont_inherit=True), namespace) if last else None
        out.append({"value": None if value is None else repr(value),
                    "names": sorted(k for k in namespace if k not in ("__builtins__", "__name__"))})
    except BaseException as exc:
        out.append({"error": type(exc).__name__ + ": " + str(exc)})
print(json.dumps(out))
`;

export interface CellOutcome {
  value?: string | null;
  names?: string[];
  error?: string;
}

export function runReplCells(cells: string[]): CellOutcome[] {
  const done = spawnSync('python3', ['-c', HARNESS], {
    input: JSON.stringify(cells),
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (done.status !== 0) throw new Error(`python3 failed (${done.status}): ${done.stderr || done.error}`);
  return JSON.parse(done.stdout) as CellOutcome[];
}

// The one cell's value, which our generated code always makes a JSON text.
export function runReplCellJson(code: string): unknown {
  const [outcome] = runReplCells([code]);
  if (outcome.error !== undefined || typeof outcome.value !== 'string') {
    throw new Error(`cell did not produce a value: ${JSON.stringify(outcome)}`);
  }
  return JSON.parse(outcome.value);
}

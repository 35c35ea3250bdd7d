import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startPlatform, type Platform } from './support/platform.js';

// The image agents expect (issue 51, part 5): besides Python, the everyday command-line
// tools an agent reaches for in a Unix sandbox, from Debian's packages in the offline
// base (docker/sandbox/base/build-base.sh, PACKAGES). Checked from user code in a real
// session, as the sandbox user, so a tool dropped from the list (or broken by a missing
// library) fails here rather than in an agent's session.
describe('Sandbox image', () => {
  let platform: Platform;

  beforeAll(async () => {
    // The socket channel, as scripts/start.sh and scripts/test.sh configure it.
    platform = await startPlatform({ SANDBOX_CHANNEL_DIR: process.env.SANDBOX_CHANNEL_DIR || join(tmpdir(), 'drydock-test-channels') });
  });

  afterAll(async () => {
    await platform?.close();
  });

  const run = async (code: string) => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const res = await api.execute(session.id, code);
    expect(res.status).toBe(200);
    // The whole body on failure: a missing tool's FileNotFoundError is in its traceback.
    expect(res.body).toMatchObject({ status: 'ok' });
    return JSON.parse(res.body.stdout);
  };

  // Each tool by the command an agent types, with a call that exits 0 when it works.
  // The Debian package it comes from is in the comment.
  const TOOLS: Record<string, string[]> = {
    bash: ['bash', '--version'], // bash
    ls: ['ls', '--version'], // coreutils
    find: ['find', '--version'], // findutils
    grep: ['grep', '--version'], // grep
    sed: ['sed', '--version'], // sed
    gawk: ['gawk', '--version'], // gawk
    awk: ['awk', '--version'], // gawk, through Debian's alternatives (mawk has no --version)
    ps: ['ps', '--version'], // procps
    git: ['git', '--version'], // git
    jq: ['jq', '--version'], // jq
    sqlite3: ['sqlite3', '--version'], // sqlite3
    file: ['file', '--version'], // file
    zip: ['zip', '-v'], // zip
    unzip: ['unzip', '-v'], // unzip
    xz: ['xz', '--version'], // xz-utils
    less: ['less', '--version'], // less
  };

  it('should have every everyday tool on PATH, each running as the sandbox user', async () => {
    const out = await run(
      [
        'import json, os, shutil, subprocess',
        `tools = ${JSON.stringify(TOOLS)}`,
        'found = {}',
        'for name, argv in tools.items():',
        '    path = shutil.which(argv[0])',
        '    if path is None:',
        '        found[name] = {"path": None}',
        '        continue',
        '    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)',
        '    found[name] = {"path": path, "code": p.returncode, "first": (p.stdout or p.stderr).strip().splitlines()[:1]}',
        'print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "tools": found}))',
      ].join('\n'),
    );
    expect(out.uid).toBe(10001);
    expect(out.gid).toBe(10001);
    const missing = Object.entries(out.tools as Record<string, { path: string | null; code?: number }>)
      .filter(([, tool]) => tool.path === null || tool.code !== 0)
      .map(([name, tool]) => `${name}: ${JSON.stringify(tool)}`);
    expect(missing).toEqual([]);
    expect(Object.keys(out.tools).sort()).toEqual(Object.keys(TOOLS).sort());
    expect(out.tools.git.first[0]).toMatch(/^git version \d/);
    expect(out.tools.awk.first[0]).toMatch(/^GNU Awk/);
  });

  // The data-analysis set (issue 52, part 1), each module doing a little real work, as
  // the sandbox user with no network: a package dropped from build-base.sh, or one whose
  // library is missing, fails here.
  it('should import the data-analysis set and do a little work with each module', async () => {
    const out = await run(
      [
        'import io, json, warnings',
        'warnings.simplefilter("ignore")',
        'done = {}',
        'import scipy.stats, scipy.optimize',
        'done["scipy"] = round(float(scipy.optimize.brentq(lambda x: x * x - 2, 0, 2)), 4)',
        'import numpy as np, sklearn.linear_model',
        'X = np.arange(10).reshape(-1, 1); y = 3 * X.ravel() + 1',
        'done["sklearn"] = round(float(sklearn.linear_model.LinearRegression().fit(X, y).coef_[0]), 4)',
        'import statsmodels.api as sm',
        'done["statsmodels"] = [round(float(v), 4) for v in sm.OLS(y, sm.add_constant(X.ravel())).fit().params]',
        'import pandas as pd, seaborn as sns, matplotlib.pyplot as plt',
        'ax = sns.barplot(data=pd.DataFrame({"k": ["a", "b"], "v": [1, 2]}), x="k", y="v"); buf = io.BytesIO(); plt.savefig(buf, format="png")',
        'done["seaborn"] = buf.getvalue()[:4] == b"\\x89PNG"',
        'import openpyxl',
        'wb = openpyxl.Workbook(); wb.active["A1"] = 41; b = io.BytesIO(); wb.save(b); b.seek(0)',
        'done["openpyxl"] = openpyxl.load_workbook(b).active["A1"].value + 1',
        'from PIL import Image',
        'im = Image.new("RGB", (4, 3), "red"); b = io.BytesIO(); im.save(b, "PNG"); b.seek(0)',
        'done["pil"] = list(Image.open(b).size)',
        'import sympy',
        'done["sympy"] = str(sympy.solve(sympy.Symbol("x") ** 2 - 4))',
        'import networkx as nx',
        'done["networkx"] = nx.shortest_path(nx.path_graph(5), 0, 4)',
        'from bs4 import BeautifulSoup',
        'done["bs4"] = BeautifulSoup("<p>hi <b>there</b></p>", "lxml").b.text',
        'import lxml.etree',
        'done["lxml"] = lxml.etree.fromstring("<a><b>1</b><b>2</b></a>").xpath("count(//b)")',
        'import docx',
        'd = docx.Document(); d.add_paragraph("from docx"); b = io.BytesIO(); d.save(b); b.seek(0)',
        'done["docx"] = docx.Document(b).paragraphs[0].text',
        'import pypdf',
        'w = pypdf.PdfWriter(); w.add_blank_page(72, 72); b = io.BytesIO(); w.write(b); b.seek(0)',
        'done["pypdf"] = len(pypdf.PdfReader(b).pages)',
        'import yaml, tabulate, requests, pip',
        'done["yaml"] = yaml.safe_load("a: [1, 2]")',
        'done["tabulate"] = tabulate.tabulate([[1, 2]], headers=["x", "y"]).splitlines()[0].split()',
        'done["requests"] = requests.Request("GET", "https://example.invalid/x", params={"q": 1}).prepare().url',
        'done["pip"] = pip.__version__.split(".")[0].isdigit()',
        'print(json.dumps(done))',
      ].join('\n'),
    );
    expect(out).toEqual({
      scipy: 1.4142,
      sklearn: 3,
      statsmodels: [1, 3],
      seaborn: true,
      openpyxl: 42,
      pil: [4, 3],
      sympy: '[-2, 2]',
      networkx: [0, 1, 2, 3, 4],
      bs4: 'there',
      lxml: 2,
      docx: 'from docx',
      pypdf: 1,
      yaml: { a: [1, 2] },
      tabulate: ['x', 'y'],
      requests: 'https://example.invalid/x?q=1',
      pip: true,
    });
  });

  it('should let the sandbox user init, add and commit with git in /session (its HOME)', async () => {
    const out = await run(
      [
        'import json, os, subprocess',
        'os.chdir("/session")',
        'open("notes.txt", "w").write("hello\\n")',
        'ident = ["-c", "user.name=Drydock Test", "-c", "user.email=test@drydock.invalid"]',
        'steps = [["git", "init", "-q"], ["git", "add", "notes.txt"], ["git", *ident, "commit", "-q", "-m", "first"],',
        '         ["git", "log", "--format=%s %an"], ["git", "status", "--porcelain"]]',
        'results = []',
        'for argv in steps:',
        '    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)',
        '    results.append({"code": p.returncode, "out": p.stdout.strip(), "err": p.stderr.strip()})',
        'print(json.dumps({"home": os.environ.get("HOME"), "results": results}))',
      ].join('\n'),
    );
    expect(out.home).toBe('/session');
    const results = out.results as { code: number; out: string; err: string }[];
    expect(results.map((r) => [r.code, r.err])).toEqual(results.map(() => [0, '']));
    expect(results[3]!.out).toBe('first Drydock Test');
    expect(results[4]!.out).toBe('');
  });

  it('should do real work with the tools, not only print their versions', async () => {
    const out = await run(
      [
        'import json, os, subprocess',
        'os.chdir("/session")',
        'def sh(script):',
        '    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)',
        '    return {"code": p.returncode, "out": p.stdout.strip(), "err": p.stderr.strip()}',
        'print(json.dumps({',
        '    "jq": sh("echo \'{\\"a\\": [1, 2, 3]}\' | jq -c \'.a | map(. * 2)\'"),',
        '    "sqlite3": sh("sqlite3 :memory: \'create table t(x); insert into t values (2), (3); select sum(x) from t;\'"),',
        '    "zip": sh("printf data > z.txt && zip -q z.zip z.txt && rm z.txt && unzip -q z.zip && cat z.txt"),',
        '    "xz": sh("printf data | xz | xz -d"),',
        '    "file": sh("file -b --mime-type z.zip"),',
        '    "awk": sh("printf \'1 2\\\\n3 4\\\\n\' | awk \'{ s += $2 } END { print s }\'"),',
        '    "ps": sh("ps -eo comm= | grep -x python3 | sort -u"),',
        '    "pipeline": sh("seq 1 100 | grep 7 | sed s/7/seven/ | sort | head -2 | tr \'\\\\n\' \' \'"),',
        '}))',
      ].join('\n'),
    );
    expect(out).toEqual({
      jq: { code: 0, out: '[2,4,6]', err: '' },
      sqlite3: { code: 0, out: '5', err: '' },
      zip: { code: 0, out: 'data', err: '' },
      xz: { code: 0, out: 'data', err: '' },
      file: { code: 0, out: 'application/zip', err: '' },
      awk: { code: 0, out: '6', err: '' },
      ps: { code: 0, out: 'python3', err: '' },
      pipeline: { code: 0, out: '1seven 2seven', err: '' },
    });
  });
});

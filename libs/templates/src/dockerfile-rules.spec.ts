import { checkDockerfile, substituteBase } from './dockerfile-rules.js';

describe('checkDockerfile', () => {
  it('accepts a template built from the platform image, with stages and their copies', () => {
    const text = [
      'ARG VERSION=1',
      'FROM drydock AS build',
      'RUN apt-get install -y sqlite3',
      'FROM drydock',
      'COPY --from=build /usr/bin/sqlite3 /usr/local/bin/',
      'COPY --from=0 /etc/hostname /tmp/x',
      'ADD notes.tar /opt/notes/',
      'LABEL team=data',
      'USER root',
      'ENV PATH=/opt/tools/bin:$PATH',
    ].join('\n');
    const check = checkDockerfile(text);
    expect(check.problems).toEqual([]);
    expect(check.baseRefs.map((r) => r.line)).toEqual([1, 3]);
  });

  it('names every refused instruction with its line', () => {
    const text = [
      '# syntax=docker/dockerfile:1',
      'FROM python:3.12',
      'FROM drydock',
      'COPY --from=127.0.0.1:5000/drydock-templates/tpl_x:1 / /',
      'ADD https://example.com/x.tgz /opt/',
      'ONBUILD RUN id',
      'VOLUME /data',
      'LABEL drydock.tenant=ten_other',
    ].join('\n');
    const { problems } = checkDockerfile(text);
    expect(problems).toHaveLength(7);
    expect(problems[0]).toMatch(/^line 1: the "syntax" directive/);
    expect(problems[1]).toMatch(/^line 2: FROM python:3.12 is not allowed/);
    expect(problems[2]).toMatch(/^line 4: COPY --from=127.0.0.1:5000/);
    expect(problems[3]).toMatch(/^line 5: ADD https:\/\/example.com\/x.tgz is not allowed/);
    expect(problems[4]).toMatch(/^line 6: ONBUILD/);
    expect(problems[5]).toMatch(/^line 7: VOLUME/);
    expect(problems[6]).toMatch(/^line 8: label drydock.tenant/);
  });

  it('refuses a Dockerfile that never builds from the platform image', () => {
    expect(checkDockerfile('').problems).toEqual(['it has no instruction; it starts with FROM drydock']);
    expect(checkDockerfile('RUN id\nFROM drydock').problems[0]).toMatch(/RUN comes before FROM/);
    expect(checkDockerfile('FROM drydock:latest').problems[0]).toMatch(/FROM drydock:latest is not allowed/);
  });

  it('substitutes the platform image in each FROM drydock, and only there', () => {
    const text = 'FROM drydock AS a\nRUN echo drydock\nFROM  drydock\nCOPY --from=a /x /y';
    const out = substituteBase(text, checkDockerfile(text).baseRefs, 'sha256:abc');
    expect(out).toBe('FROM sha256:abc AS a\nRUN echo drydock\nFROM  sha256:abc\nCOPY --from=a /x /y');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildingLine, readyLine, versionMismatch } from './progress-lines.ts';

describe('first-start progress lines', () => {
  it('says a Go build compiles and how long the first one takes; others that they build', () => {
    assert.equal(buildingLine('hello-go', 'go1.23'), 'hello-go: compiling, the first build takes ~40 s');
    assert.match(buildingLine('hello-node', 'nodejs20'), /^hello-node: building/);
    assert.equal(readyLine('hello-go', 'http://localhost:8080/fn/dev/hello-go'), 'hello-go: ready at http://localhost:8080/fn/dev/hello-go');
  });

  it('warns when the interpreter found is another version than the runtime asks for, and says which', () => {
    const cases: [Parameters<typeof versionMismatch>[1], string | undefined, RegExp | undefined][] = [
      ['python3.12', 'Python 3.11.7', /asks for python3\.12 but runs on Python 3\.11\.7 \(python3\)/],
      ['python3.11', 'Python 3.11.7', undefined],
      ['nodejs22', 'v20.18.0', /asks for nodejs22 but runs on Node 20\.18\.0/],
      ['nodejs22', 'v22.23.3', undefined],
      ['go1.23', 'go version go1.26.8 linux/amd64', /asks for go1\.23 but runs on Go 1\.26\.8 \(go\)/],
      ['go1.23', 'go version go1.23.4 linux/amd64', undefined],
      ['python3.12', undefined, /could not tell which version python3 is/],
    ];
    for (const [runtime, found, want] of cases) {
      const got = versionMismatch('f', runtime, found, runtime.startsWith('go') ? 'go' : 'python3');
      if (want) assert.match(got ?? '', want, `${runtime} on ${found}`);
      else assert.equal(got, undefined, `${runtime} on ${found}`);
    }
  });
});

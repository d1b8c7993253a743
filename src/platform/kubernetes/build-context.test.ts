import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contextDockerfile, contextDockerfiles } from './build-context.ts';

const base = { entrypoint: 'handler.handle', baseImage: 'r/sless-runtime:3' };

describe('the build context Dockerfiles', () => {
  it('adds the two halves (and the dependencies kind) to a function that installs dependencies; the whole Dockerfile stays for kaniko', () => {
    const input = { ...base, runtime: 'python3.11' as const, paths: ['handler.py', 'requirements.txt'] };
    const { kind, files } = contextDockerfiles(input);
    assert.equal(kind, 'dependencies');
    assert.deepEqual(files.map((f) => f.path), ['Dockerfile', 'Dockerfile.dependencies', 'Dockerfile.code']);
    assert.equal(files[0]?.content, contextDockerfile(input));
  });

  it('keeps one Dockerfile for a function that installs nothing (layer) and for Go (kaniko)', () => {
    assert.deepEqual(contextDockerfiles({ ...base, runtime: 'nodejs20', paths: ['handler.js'] }).kind, 'layer');
    const go = contextDockerfiles({ ...base, runtime: 'go1.23', paths: ['handler.go', 'go.mod'] });
    assert.equal(go.kind, 'kaniko');
    assert.deepEqual(go.files.map((f) => f.path), ['Dockerfile']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildKindOfContextKey, buildKindOfDockerfile, contextKeyOfKind } from './build-kind.ts';
import { generateDockerfile, type DockerfileOptions } from './dockerfile.ts';

const none: DockerfileOptions = { baseImage: 'r/sless-runtime:3', hasRequirementsTxt: false, hasPackageJson: false, hasPackageLock: false, hasGoMod: false };

describe('build kind', () => {
  it('builds a function whose Dockerfile runs nothing as a layer on its base image, anything else with kaniko', () => {
    const kind = (runtime: 'python3.11' | 'nodejs20' | 'go1.23', opts: Partial<DockerfileOptions> = {}) =>
      buildKindOfDockerfile(generateDockerfile({ runtime, entrypoint: 'handler.handle' }, { ...none, ...opts }));
    assert.equal(kind('nodejs20'), 'layer');
    assert.equal(kind('python3.11'), 'layer');
    assert.equal(kind('nodejs20', { hasPackageJson: true }), 'kaniko');
    assert.equal(kind('python3.11', { hasRequirementsTxt: true }), 'kaniko');
    assert.equal(kind('go1.23'), 'kaniko');
    assert.equal(buildKindOfDockerfile('FROM a AS one\nCOPY function/ /app/\nFROM b\n'), 'kaniko');
  });

  it('is carried by the context key, and any key it did not write is built by kaniko', () => {
    const key = 'contexts/0123abcd.tar.gz';
    assert.equal(contextKeyOfKind(key, 'kaniko'), key);
    assert.equal(contextKeyOfKind(key, 'layer'), 'contexts/0123abcd.layer.tar.gz');
    assert.equal(buildKindOfContextKey(contextKeyOfKind(key, 'layer')), 'layer');
    assert.equal(buildKindOfContextKey(key), 'kaniko');
    assert.equal(buildKindOfContextKey('uploads/x.layer.tar.gz'), 'kaniko');
    assert.equal(contextKeyOfKind(key, 'dependencies'), 'contexts/0123abcd.deps.tar.gz');
    assert.equal(buildKindOfContextKey(contextKeyOfKind(key, 'dependencies')), 'dependencies');
    assert.equal(buildKindOfContextKey('uploads/x.deps.tar.gz'), 'kaniko');
  });

  it('is kaniko for every key when the operator turns layer builds off', () => {
    const layerKey = contextKeyOfKind('contexts/0123abcd.tar.gz', 'layer');
    assert.equal(buildKindOfContextKey(layerKey, { layers: false }), 'kaniko');
    assert.equal(buildKindOfContextKey(contextKeyOfKind('contexts/0123abcd.tar.gz', 'dependencies'), { layers: false }), 'kaniko');
    assert.equal(buildKindOfContextKey(layerKey, { layers: true }), 'layer');
    assert.equal(buildKindOfContextKey(layerKey, {}), 'layer', 'on by default');
  });
});

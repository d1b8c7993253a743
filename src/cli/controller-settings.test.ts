// Production settings reach the controller (issue 11 items 2, 5, 10): each SLESS_* variable ends up in
// the ControllerSettings the reconcilers and object builders read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadControllerConfig } from '../config/config.ts';
import { buildJob } from '../platform/kubernetes/objects/build-job.ts';
import { functionDeployment } from '../platform/kubernetes/objects/function-workload.ts';
import { resolveControllerSettings } from '../platform/kubernetes/settings.ts';
import { DEFAULT_TREE_LIMITS } from '../source/tree-limits.ts';
import { controllerSettings } from './controller.ts';

const base = { SLESS_JWT_SECRET: 'a-test-secret-of-at-least-32-bytes!', SLESS_S3_BUCKET: 'contexts', SLESS_REGISTRY: 'reg.example/sless' };

describe('sless controller settings', () => {
  it('defaults: public git targets only, 10 s interval floor, per-repository and per-namespace caps', () => {
    const s = controllerSettings(loadControllerConfig([], base));
    assert.deepEqual(s.git, { allowedHosts: [], deniedCidrs: [], crossHostRedirects: false, maxFetchBytes: 256 * 1024 * 1024, treeLimits: DEFAULT_TREE_LIMITS, maxFunctions: 500, minIntervalMs: 10_000 });
    assert.deepEqual(s.limits, { functionsPerNamespace: 1000, schedulesPerNamespace: 2000, jobsPerNamespace: 2000, queueConsumersPerNamespace: 20, queueInFlightPerNamespace: 64, buildsPerNamespace: 10, syncShare: 0.1, maxReplicas: 20, schedulesPerFunction: 20, jobsPerFunction: 20 });
    assert.equal(s.resyncMs, 600_000);
    assert.deepEqual(s.concurrency, { syncs: 8, builds: 16, reconciles: 8, uploads: 32 });
    assert.equal(s.build?.activeDeadlineSeconds, 1800);
    assert.equal(s.imagePullSecrets, undefined);
    assert.equal(s.registrySecretName, undefined);
  });

  it('takes every production knob from SLESS_* variables', () => {
    const s = controllerSettings(
      loadControllerConfig([], {
        ...base,
        SLESS_GIT_ALLOWED_HOSTS: 'gitea.gitea.svc, 10.96.7.0/24',
        SLESS_GIT_DENIED_CIDRS: '203.0.113.0/24',
        SLESS_GIT_CROSS_HOST_REDIRECTS: 'true',
        SLESS_GIT_MAX_FETCH_BYTES: '1048576',
        SLESS_MAX_FUNCTIONS_PER_REPOSITORY: '50',
        SLESS_MAX_FUNCTIONS_PER_NAMESPACE: '60',
        SLESS_MAX_SCHEDULES_PER_NAMESPACE: '70',
        SLESS_MAX_JOBS_PER_NAMESPACE: '80',
        SLESS_MAX_QUEUE_CONSUMERS_PER_NAMESPACE: '5',
        SLESS_MAX_QUEUE_IN_FLIGHT_PER_NAMESPACE: '16',
        SLESS_MAX_BUILDS_PER_NAMESPACE: '4',
        SLESS_MAX_SYNCS_PER_NAMESPACE: '3',
        SLESS_SYNC_SHARE: '0.25',
        SLESS_MAX_REPLICAS: '6',
        SLESS_MAX_SCHEDULES_PER_FUNCTION: '7',
        SLESS_MAX_JOBS_PER_FUNCTION: '9',
        SLESS_MIN_INTERVAL: '30s',
        SLESS_IMAGE_PULL_SECRETS: 'pull-a,pull-b',
        SLESS_REGISTRY_SECRET: 'push-creds',
        SLESS_RESYNC_PERIOD: '20m',
        SLESS_SYNC_CONCURRENCY: '4',
        SLESS_BUILD_CONCURRENCY: '3',
        SLESS_RECONCILE_CONCURRENCY: '16',
        SLESS_UPLOAD_CONCURRENCY: '2',
        SLESS_BUILD_CPU: '2',
        SLESS_BUILD_MEMORY: '3Gi',
        SLESS_BUILD_TIMEOUT: '15m',
        SLESS_MAX_TREE_DEPTH: '40',
        SLESS_MAX_PATH_BYTES: '1024',
        SLESS_MAX_TREE_BYTES: '8388608',
      }),
    );
    assert.deepEqual(s.git, { allowedHosts: ['gitea.gitea.svc', '10.96.7.0/24'], deniedCidrs: ['203.0.113.0/24'], crossHostRedirects: true, maxFetchBytes: 1048576, treeLimits: { maxDepth: 40, maxPathBytes: 1024, maxListingBytes: 8388608 }, maxFunctions: 50, minIntervalMs: 30_000 });
    assert.deepEqual(s.limits, { functionsPerNamespace: 60, schedulesPerNamespace: 70, jobsPerNamespace: 80, queueConsumersPerNamespace: 5, queueInFlightPerNamespace: 16, buildsPerNamespace: 4, syncShare: 0.25, maxReplicas: 6, schedulesPerFunction: 7, jobsPerFunction: 9, syncsPerNamespace: 3 });
    assert.deepEqual(s.imagePullSecrets, ['pull-a', 'pull-b']);
    assert.equal(s.registrySecretName, 'push-creds');
    assert.equal(s.resyncMs, 20 * 60_000);
    assert.deepEqual(s.concurrency, { syncs: 4, builds: 3, reconciles: 16, uploads: 2 });
    assert.deepEqual(s.build, { cache: true, layers: true, activeDeadlineSeconds: 900, cpu: '2', memory: '3Gi' });

    const resolved = resolveControllerSettings(s);
    const job = buildJob(resolved, { namespace: 'team', name: 'fn', buildKey: 'a'.repeat(64), contextUrl: 'https://s3.example/contexts/x.tar.gz?X-Amz-Signature=1' });
    assert.equal(job.spec?.activeDeadlineSeconds, 900);
    const kaniko = job.spec?.template.spec?.initContainers?.find((c) => c.name === 'kaniko');
    assert.deepEqual(kaniko?.resources?.requests, { cpu: '2', memory: '3Gi' });
    assert.equal(job.spec?.template.spec?.volumes?.find((v) => v.name === 'registry-config')?.secret?.secretName, 'push-creds', 'the push step pushes with the named registry Secret');
    const fn = { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Function', metadata: { name: 'fn', namespace: 'team', uid: 'u' }, spec: { runtime: 'nodejs20' } };
    const deployment = functionDeployment(resolved, fn as never, { imageRef: 'reg.example/sless/team-fn:abc@sha256:' + 'a'.repeat(64), httpEnabled: true, replicas: 1 });
    assert.deepEqual(deployment.spec?.template.spec?.imagePullSecrets, [{ name: 'pull-a' }, { name: 'pull-b' }]);
  });

  it('builds: the layer cache and layer builds are on by default; a pull-only Secret for kaniko and the build tools image are settings', () => {
    const d = controllerSettings(loadControllerConfig([], base));
    assert.equal(d.build?.cache, true);
    assert.equal(d.build?.layers, true, 'Dockerfiles that run nothing are built without kaniko by default');
    assert.equal(d.build?.pullSecretName, undefined);
    assert.equal(d.buildToolsImage, undefined);
    const s = controllerSettings(
      loadControllerConfig([], { ...base, SLESS_BUILD_CACHE: '0', SLESS_LAYER_BUILDS: 'false', SLESS_BUILD_PULL_SECRET: 'pull-only', SLESS_BUILD_TOOLS_IMAGE: 'reg.example/tools:1' }),
    );
    assert.equal(s.build?.cache, false);
    assert.equal(s.build?.layers, false);
    assert.equal(s.build?.pullSecretName, 'pull-only');
    assert.equal(s.buildToolsImage, 'reg.example/tools:1');
  });

  it('with a JWKS: issuer and audience required unless waived, algorithms pinned (default RS256, ES256)', () => {
    const jwks = { ...base, SLESS_JWT_SECRET: undefined, SLESS_JWKS_URL: 'https://idp.example/jwks' };
    assert.throws(() => loadControllerConfig([], jwks), /SLESS_JWT_ISSUER and SLESS_JWT_AUDIENCE are not both set/);
    assert.throws(() => loadControllerConfig([], { ...jwks, SLESS_JWT_ISSUER: 'https://idp.example/' }), /not both set/);
    const both = loadControllerConfig([], { ...jwks, SLESS_JWT_ISSUER: 'https://idp.example/', SLESS_JWT_AUDIENCE: 'sless' });
    assert.equal(both.jwtAlgorithms, undefined, 'the verifier pins its default');
    assert.equal(loadControllerConfig([], { ...jwks, SLESS_JWT_ANY_ISSUER_AUDIENCE: '1' }).jwtAnyIssuerAudience, true);
    assert.deepEqual(loadControllerConfig([], { ...jwks, SLESS_JWT_ANY_ISSUER_AUDIENCE: '1', SLESS_JWT_ALGORITHMS: 'ES256, EdDSA' }).jwtAlgorithms, ['ES256', 'EdDSA']);
    assert.throws(() => loadControllerConfig([], { ...jwks, SLESS_JWT_ANY_ISSUER_AUDIENCE: '1', SLESS_JWT_ALGORITHMS: 'HS256' }), /SLESS_JWT_ALGORITHMS/);
    assert.throws(() => loadControllerConfig([], { ...jwks, SLESS_JWT_ANY_ISSUER_AUDIENCE: '1', SLESS_JWT_ALGORITHMS: 'none' }), /SLESS_JWT_ALGORITHMS/);
  });

  it('names the setting when a value is wrong', () => {
    assert.throws(() => loadControllerConfig([], { ...base, SLESS_BUILD_MEMORY: 'lots' }), /SLESS_BUILD_MEMORY.*Kubernetes quantity/);
    assert.throws(() => loadControllerConfig([], { ...base, SLESS_MIN_INTERVAL: '1 second' }), /SLESS_MIN_INTERVAL/);
    assert.throws(() => loadControllerConfig([], { ...base, SLESS_SYNC_CONCURRENCY: '0' }), /SLESS_SYNC_CONCURRENCY/);
    assert.throws(() => controllerSettings(loadControllerConfig([], { ...base, SLESS_GIT_DENIED_CIDRS: '10.0.0.0/99' })), /SLESS_GIT_DENIED_CIDRS.*prefix length/);
  });
});

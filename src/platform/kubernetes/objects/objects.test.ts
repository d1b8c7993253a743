import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildContextUrlTtlSec, buildJob, buildJobName } from './build-job.ts';
import { buildKey, imageTag, tagOf } from './build-key.ts';
import { functionDeployment, functionService, serviceBaseUrl } from './function-workload.ts';
import { functionJobRun, runJobName, triggerCronJob } from './job-workloads.ts';
import { dnsLabel } from './meta.ts';
import { fn, settings } from './test-fixtures.ts';

const key = buildKey({ codeHash: `sha256:${'a'.repeat(64)}`, runtime: 'nodejs20', baseImage: 'r/node:1' });

describe('build key', () => {
  it('changes with code, runtime and base image, and only with them', () => {
    const base = { codeHash: 'sha256:1', runtime: 'nodejs20', baseImage: 'img:1' } as const;
    const keys = new Set([
      buildKey(base),
      buildKey({ ...base, codeHash: 'sha256:2' }),
      buildKey({ ...base, runtime: 'nodejs22' }),
      buildKey({ ...base, baseImage: 'img:2' }),
    ]);
    assert.equal(keys.size, 4);
    assert.equal(buildKey(base), buildKey({ ...base }));
    assert.match(buildKey(base), /^[0-9a-f]{64}$/);
  });
  it('names an image tag', () => {
    assert.equal(imageTag(key), key.slice(0, 40));
  });
  it('reads the tag back from an image reference', () => {
    assert.equal(tagOf('reg:5000/a/b:t1@sha256:00'), 't1');
    assert.equal(tagOf('reg:5000/a/b@sha256:00'), undefined);
    assert.equal(tagOf(undefined), undefined);
  });
});

describe('dnsLabel', () => {
  it('keeps short names and shortens long ones stably, within the limit', () => {
    assert.equal(dnsLabel(['a', 'b']), 'a-b');
    const long = dnsLabel(['x'.repeat(50), 'y'.repeat(30)]);
    assert.equal(long.length, 63);
    assert.equal(long, dnsLabel(['x'.repeat(50), 'y'.repeat(30)]));
    assert.notEqual(long, dnsLabel(['x'.repeat(50), 'z'.repeat(30)]));
  });
});

describe('build Job', () => {
  const contextUrl = `http://s3.local:8333/ctx/contexts/${key}.tar.gz?X-Amz-Signature=abc`;
  const job = buildJob(settings, { namespace: 'team-a', name: 'hello', buildKey: key, contextUrl });
  const pod = job.spec?.template.spec;
  const dest = `registry.local:5000/sless/team-a-hello:${key.slice(0, 40)}`;
  const cacheRepo = 'registry.local:5000/sless/team-a-hello/cache';
  const tools = {
    image: 'registry.local:5000/runtimes/sless-build-tools:4',
    env: [{ name: 'DOCKER_CONFIG', value: '/docker' }],
    securityContext: {
      runAsUser: 65532,
      runAsGroup: 65532,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
  };

  it('has a deterministic name per function and build key', () => {
    assert.equal(job.metadata?.name, buildJobName('team-a', 'hello', key));
    assert.notEqual(buildJobName('team-b', 'hello', key), buildJobName('team-a', 'hello', key));
    assert.ok((job.metadata?.name ?? '').length <= 63);
    assert.equal(job.metadata?.namespace, 'sless-builds');
  });

  it('fetches the context by URL, builds with kaniko without pushing, and pushes from a step that runs no tenant code', () => {
    assert.deepEqual(pod?.initContainers, [
      {
        name: 'fetch',
        ...tools,
        args: ['fetch', '-url', contextUrl, '-out', '/workspace/context.tar.gz', '-cache-repo', cacheRepo, '-cache-dir', '/cache/kaniko/layers'],
        volumeMounts: [
          { name: 'workspace', mountPath: '/workspace' },
          { name: 'cache', mountPath: '/cache' },
          { name: 'registry-config', mountPath: '/docker', readOnly: true },
        ],
      },
      {
        name: 'kaniko',
        image: 'martizih/kaniko:v1.28.0',
        args: [
          '--context=tar:///workspace/context.tar.gz',
          `--destination=${dest}`,
          '--no-push',
          '--tar-path=/out/image.tar',
          '--snapshot-mode=redo',
          '--use-new-run',
          '--cache=true',
          '--cache-repo=oci:/cache/kaniko/layers',
        ],
        securityContext: { allowPrivilegeEscalation: false },
        resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '1Gi' } },
        volumeMounts: [
          { name: 'workspace', mountPath: '/workspace', readOnly: true },
          { name: 'cache', mountPath: '/cache' },
          { name: 'out', mountPath: '/out' },
        ],
      },
    ]);
    assert.deepEqual(pod?.containers, [
      {
        name: 'push',
        ...tools,
        // root, to read kaniko's cache blobs (root's, 0600), with no capability and no tenant code
        securityContext: { ...tools.securityContext, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false },
        args: ['push', '-tarball', '/out/image.tar', '-destination', dest, '-digest-file', '/dev/termination-log', '-cache-repo', cacheRepo, '-cache-dir', '/cache/kaniko/layers'],
        terminationMessagePolicy: 'File',
        volumeMounts: [
          { name: 'out', mountPath: '/out', readOnly: true },
          { name: 'cache', mountPath: '/cache', readOnly: true },
          { name: 'registry-config', mountPath: '/docker', readOnly: true },
        ],
      },
    ]);
  });

  it('holds no platform secret where tenant code runs: no S3 key anywhere, no service account token, registry auth only for fetch and push', () => {
    assert.equal(pod?.automountServiceAccountToken, false);
    assert.equal(pod?.enableServiceLinks, false);
    const all = [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])];
    for (const c of all) assert.ok(!(c.env ?? []).some((e) => e.name.startsWith('AWS_') || e.valueFrom), `${c.name} has no secret env`);
    const kaniko = all.find((c) => c.name === 'kaniko');
    assert.ok(!(kaniko?.volumeMounts ?? []).some((m) => m.name === 'registry-config'));
    assert.deepEqual(pod?.volumes, [
      { name: 'workspace', emptyDir: {} },
      { name: 'cache', emptyDir: {} },
      { name: 'out', emptyDir: {} },
      {
        name: 'registry-config',
        secret: { secretName: 'sless-registry', optional: true, defaultMode: 0o444, items: [{ key: '.dockerconfigjson', path: 'config.json' }] },
      },
    ]);
  });

  it('gives kaniko a pull-only Secret when one is configured, and turns the layer cache off on request', () => {
    const j = buildJob({ ...settings, build: { ...settings.build, pullSecretName: 'pull-only', cache: false }, buildToolsImage: 'tools:9' }, { namespace: 'team-a', name: 'hello', buildKey: key, contextUrl });
    const [fetch, kaniko] = j.spec?.template.spec?.initContainers ?? [];
    assert.equal(fetch?.image, 'tools:9');
    assert.deepEqual(fetch?.args, ['fetch', '-url', contextUrl, '-out', '/workspace/context.tar.gz']);
    assert.ok(kaniko?.args?.includes('--cache=false'));
    assert.ok(!kaniko?.args?.some((a) => a.startsWith('--cache-repo')));
    assert.deepEqual(kaniko?.volumeMounts?.at(-1), { name: 'kaniko-pull-config', mountPath: '/kaniko/.docker', readOnly: true });
    assert.deepEqual(j.spec?.template.spec?.volumes?.at(-1)?.secret, {
      secretName: 'pull-only',
      optional: true,
      defaultMode: 0o400, // root's only: kaniko's install steps run as 10001
      items: [{ key: '.dockerconfigjson', path: 'config.json' }],
    });
  });

  it('builds a context that runs nothing (kind layer) in one step without kaniko: the tools user appends the code layer and pushes', () => {
    const j = buildJob(settings, { namespace: 'team-a', name: 'hello', buildKey: key, contextUrl, kind: 'layer' });
    const spec = j.spec?.template.spec;
    assert.equal(j.metadata?.name, job.metadata?.name);
    assert.equal(spec?.initContainers, undefined);
    assert.equal(spec?.automountServiceAccountToken, false);
    assert.deepEqual(spec?.containers, [
      {
        name: 'push',
        ...tools,
        args: ['append', '-url', contextUrl, '-workdir', '/workspace', '-destination', dest, '-digest-file', '/dev/termination-log'],
        terminationMessagePolicy: 'File',
        resources: { requests: { cpu: '500m', memory: '128Mi' }, limits: { memory: '512Mi' } },
        volumeMounts: [
          { name: 'workspace', mountPath: '/workspace' },
          { name: 'registry-config', mountPath: '/docker', readOnly: true },
        ],
      },
    ]);
    assert.deepEqual(spec?.volumes?.map((v) => v.name), ['workspace', 'registry-config']);
    // A private base image's pull-only Secret is kaniko's: such a build stays a kaniko build.
    const withPull = buildJob({ ...settings, build: { ...settings.build, pullSecretName: 'pull-only' } }, { namespace: 'team-a', name: 'hello', buildKey: key, contextUrl, kind: 'layer' });
    assert.deepEqual(withPull.spec?.template.spec?.initContainers?.map((c) => c.name), ['fetch', 'kaniko']);
  });

  it('builds a context that installs dependencies (kind dependencies) as the dependencies image, when fetch finds it missing, then the code appended onto it', () => {
    const j = buildJob(settings, { namespace: 'team-a', name: 'hello', buildKey: key, contextUrl, kind: 'dependencies' });
    const spec = j.spec?.template.spec;
    const depsRepo = 'registry.local:5000/sless/team-a-hello/deps';
    assert.equal(j.metadata?.name, job.metadata?.name);
    const [fetch, kaniko] = spec?.initContainers ?? [];
    assert.deepEqual(fetch?.args, [
      'fetch', '-url', contextUrl, '-out', '/workspace/context.tar.gz', '-cache-repo', cacheRepo, '-cache-dir', '/cache/kaniko/layers',
      '-deps-repo', depsRepo, '-deps-dockerfile', 'Dockerfile.dependencies', '-kaniko-context', '/workspace/kaniko-context.tar.gz', '-deps-out', '/workspace/dependencies',
    ]);
    assert.deepEqual(fetch?.securityContext, tools.securityContext, 'fetch runs as the tools user');
    // kaniko builds the dependencies image only (or nothing: fetch decides its context), never the code.
    assert.deepEqual(kaniko?.args?.slice(0, 3), ['--context=tar:///workspace/kaniko-context.tar.gz', '--dockerfile=Dockerfile.dependencies', `--destination=${depsRepo}:build`]);
    assert.ok(kaniko?.args?.includes('--no-push'));
    assert.ok(!kaniko?.volumeMounts?.some((m) => m.name === 'registry-config'), 'kaniko holds no registry credential');
    const push = spec?.containers[0];
    assert.deepEqual(push?.args, [
      'append', '-context', '/workspace/context.tar.gz', '-workdir', '/workspace', '-dockerfile', 'Dockerfile.code', '-dependencies', '/workspace/dependencies',
      '-tarball', '/out/image.tar', '-destination', dest, '-digest-file', '/dev/termination-log', '-cache-repo', cacheRepo, '-cache-dir', '/cache/kaniko/layers',
    ]);
    assert.deepEqual(push?.volumeMounts?.find((m) => m.name === 'workspace'), { name: 'workspace', mountPath: '/workspace' });
    // Any other kind keeps today's kaniko Job: the whole Dockerfile, its image pushed as is.
    const whole = job.spec?.template.spec;
    assert.equal(whole?.initContainers?.[1]?.args?.[0], '--context=tar:///workspace/context.tar.gz');
    assert.equal(whole?.containers[0]?.args?.[0], 'push');
  });

  it('is bounded: backoff, ttl, deadline; the context URL outlives the deadline; labels say whose build it is', () => {
    assert.equal(job.spec?.backoffLimit, 1);
    assert.equal(job.spec?.ttlSecondsAfterFinished, 3600);
    assert.equal(job.spec?.activeDeadlineSeconds, 1800);
    assert.ok(buildContextUrlTtlSec(settings) > 1800);
    assert.equal(pod?.restartPolicy, 'Never');
    assert.equal(job.metadata?.labels?.['sless.kube5s.ru/function'], 'hello');
    assert.equal(job.metadata?.labels?.['sless.kube5s.ru/function-namespace'], 'team-a');
    assert.equal(job.metadata?.labels?.['sless.kube5s.ru/build-key'], key.slice(0, 40));
  });
});

describe('function Deployment and Service', () => {
  const dep = functionDeployment(settings, fn, { imageRef: 'img@sha256:1', httpEnabled: true, replicas: 1 });
  const c = dep.spec?.template.spec?.containers[0];
  it('runs the image by digest with memory from memoryMB and probes on /health', () => {
    assert.equal(c?.image, 'img@sha256:1');
    assert.deepEqual(c?.resources, { requests: { memory: '256Mi' }, limits: { memory: '256Mi' } });
    assert.equal(c?.readinessProbe?.httpGet?.path, '/health');
    assert.equal(c?.livenessProbe?.httpGet?.path, '/health');
    assert.equal(c?.ports?.[0]?.containerPort, 8080);
  });
  it('watches start-up every second for up to a minute, so a new pod is Ready as soon as it answers', () => {
    assert.deepEqual(c?.startupProbe, { httpGet: { path: '/health', port: 'http' }, periodSeconds: 1, timeoutSeconds: 2, failureThreshold: 60 });
    assert.equal(c?.readinessProbe?.periodSeconds, 5);
    assert.equal(c?.livenessProbe?.initialDelaySeconds, undefined);
  });
  it('keeps a terminating pod serving while it leaves the Service (preStop sleep before SIGTERM)', () => {
    assert.deepEqual(c?.lifecycle, { preStop: { sleep: { seconds: 5 } } });
    assert.ok((dep.spec?.template.spec?.terminationGracePeriodSeconds ?? 30) > 5);
  });
  it("keeps a crashed process's last log lines as its termination message (the Function quotes them)", () => {
    assert.equal(c?.terminationMessagePolicy, 'FallbackToLogsOnError');
  });
  it('passes env sorted, then the runtime settings, and secrets as envFrom', () => {
    assert.deepEqual(
      c?.env?.map((e) => `${e.name}=${e.value}`),
      ['A=1', 'B=2', 'SLESS_ENTRYPOINT=handler.handle', 'SLESS_FUNCTION_NAME=hello', 'SLESS_NAMESPACE=team-a',
        'SLESS_TIMEOUT_SEC=10', 'PORT=8080', 'TMPDIR=/tmp'],
    );
    assert.deepEqual(c?.envFrom, [{ secretRef: { name: 'db' } }]);
  });
  it('runs non-root on a read-only root with a tmp emptyDir and the pull secret', () => {
    const pod = dep.spec?.template.spec;
    assert.equal(pod?.securityContext?.runAsNonRoot, true);
    assert.equal(c?.securityContext?.readOnlyRootFilesystem, true);
    assert.deepEqual(c?.volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }]);
    assert.deepEqual(pod?.imagePullSecrets, [{ name: 'pull' }]);
  });
  it('is owned by the Function, runs the replicas it is given (workload-replicas.ts decides them), marked disabled when http is disabled', () => {
    assert.deepEqual(dep.metadata?.ownerReferences, [
      { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Function', name: 'hello', uid: 'uid-fn', controller: true, blockOwnerDeletion: true },
    ]);
    assert.equal(dep.spec?.replicas, 1);
    assert.equal(dep.metadata?.annotations?.['sless.kube5s.ru/http-disabled'], undefined);
    assert.equal(functionDeployment(settings, fn, { imageRef: 'i', httpEnabled: true, replicas: 3 }).spec?.replicas, 3);
    const off = functionDeployment(settings, fn, { imageRef: 'i', httpEnabled: false, replicas: 0 });
    assert.equal(off.spec?.replicas, 0);
    assert.equal(off.metadata?.annotations?.['sless.kube5s.ru/http-disabled'], 'true');
  });
  it('gives a terminating pod the preStop pause plus the longest call before it is killed', () => {
    const long = functionDeployment(settings, { ...fn, spec: { ...fn.spec, runtime: 'nodejs20', timeoutSec: 120 } }, { imageRef: 'i', httpEnabled: true, replicas: 1 });
    assert.equal(long.spec?.template.spec?.terminationGracePeriodSeconds, 130);
    assert.equal(dep.spec?.template.spec?.terminationGracePeriodSeconds, 30);
  });
  it('exposes port 80 to the pods http port', () => {
    const svc = functionService(fn);
    assert.deepEqual(svc.spec?.ports, [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
    assert.deepEqual(svc.spec?.selector, dep.spec?.selector.matchLabels);
    assert.equal(serviceBaseUrl('team-a', 'hello', 'cluster.local'), 'http://hello.team-a.svc.cluster.local:80');
  });
});

describe('CronJob and run Job', () => {
  const trigger = {
    metadata: { name: 'hello-cron-nightly', namespace: 'team-a' },
    spec: { type: 'cron' as const, functionRef: 'hello', schedule: '0 3 * * *', timezone: 'Europe/Moscow', eventJSON: '{"kind":"nightly"}', enabled: true },
  };
  it('a cron Trigger becomes a CronJob of the function image in job mode', () => {
    const cj = triggerCronJob(settings, fn, trigger, 'img@sha256:1');
    assert.equal(cj.metadata?.name, 'hello-cron-nightly');
    assert.equal(cj.spec?.schedule, '0 3 * * *');
    assert.equal(cj.spec?.timeZone, 'Europe/Moscow');
    assert.equal(cj.spec?.concurrencyPolicy, 'Forbid');
    assert.equal(cj.spec?.suspend, false);
    assert.equal(cj.spec?.successfulJobsHistoryLimit, 3);
    const env = cj.spec?.jobTemplate.spec?.template.spec?.containers[0]?.env ?? [];
    assert.deepEqual(env.slice(-2), [{ name: 'SLESS_MODE', value: 'job' }, { name: 'SLESS_EVENT', value: '{"kind":"nightly"}' }]);
    assert.equal(cj.spec?.jobTemplate.spec?.template.spec?.restartPolicy, 'Never');
    assert.equal(triggerCronJob(settings, fn, { ...trigger, spec: { ...trigger.spec, enabled: false } }, 'i').spec?.suspend, true);
  });
  it('a FunctionJob run gets a Job named by job and runID', () => {
    const fj = { metadata: { name: 'hello-seed', namespace: 'team-a' }, spec: { functionRef: 'hello', runID: 3, eventJSON: '[1]' } };
    const job = functionJobRun(settings, fn, fj, 'img@sha256:1');
    assert.equal(job.metadata?.name, 'hello-seed-r3');
    assert.equal(runJobName({ ...fj, spec: { ...fj.spec, runID: 4 } }), 'hello-seed-r4');
    assert.equal(job.spec?.backoffLimit, 0);
    assert.equal(job.metadata?.ownerReferences?.[0]?.kind, 'Function');
    const env = job.spec?.template.spec?.containers[0]?.env ?? [];
    assert.deepEqual(env.slice(-2), [{ name: 'SLESS_MODE', value: 'job' }, { name: 'SLESS_EVENT', value: '[1]' }]);
  });
});

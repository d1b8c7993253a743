import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testControllerSettings } from '../../../../test/helpers/controller-settings.ts';
import { buildJob } from '../objects/build-job.ts';
import {
  PREVIEW_IMAGES_COMPONENT,
  previewBuildJobs,
  previewImageRepositories,
  previewImagesJob,
  previewImagesJobName,
  pruneIncarnation,
  removalIncarnation,
} from './preview-images-job.ts';

const settings = testControllerSettings({ registrySecretName: 'push-creds' });
const preview = { namespace: 'team', repository: 'fns', number: 7 };

describe("a preview's image repositories", () => {
  it('three per function (image, layer cache, dependencies images), each name once', () => {
    const got = previewImageRepositories(settings, 'team-pr-7', ['web', 'api', 'api', ''], []);
    assert.deepEqual(got.repositories, [
      'registry.local:5000/sless/team-pr-7-api',
      'registry.local:5000/sless/team-pr-7-api/cache',
      'registry.local:5000/sless/team-pr-7-api/deps',
      'registry.local:5000/sless/team-pr-7-web',
      'registry.local:5000/sless/team-pr-7-web/cache',
      'registry.local:5000/sless/team-pr-7-web/deps',
    ]);
    assert.deepEqual(got.shared, []);
  });

  it('the repositories a Function of another namespace maps to as well are kept (namespace team, function pr-7-api: the same <ns>-<name>)', () => {
    const others = [
      { namespace: 'team', name: 'pr-7-api' },
      { namespace: 'team', name: 'web' },
      { namespace: 'team-pr-7', name: 'web' }, // the preview's own Function
    ];
    const got = previewImageRepositories(settings, 'team-pr-7', ['api', 'web'], others);
    assert.deepEqual(got.shared, ['api']);
    assert.deepEqual(got.repositories, [
      'registry.local:5000/sless/team-pr-7-web',
      'registry.local:5000/sless/team-pr-7-web/cache',
      'registry.local:5000/sless/team-pr-7-web/deps',
    ]);
  });

  it("are the repositories the preview's builds push to", () => {
    const build = buildJob(settings, {
      namespace: 'team-pr-7',
      name: 'api',
      buildKey: 'k'.repeat(64),
      contextUrl: 'http://s3/ctx',
      kind: 'dependencies',
    });
    const { repositories } = previewImageRepositories(settings, 'team-pr-7', ['api'], []);
    const args = [
      ...(build.spec?.template.spec?.initContainers ?? []),
      ...(build.spec?.template.spec?.containers ?? []),
    ].flatMap((c) => c.args ?? []);
    const pushedTo = new Set(
      args.flatMap((a, i) =>
        ['-destination', '-cache-repo', '-deps-repo'].includes(args[i - 1] ?? '')
          ? [a.replace(/:[^:/]+$/, '')]
          : [],
      ),
    );
    assert.deepEqual([...pushedTo].sort(), repositories);
  });
});

describe("the Job that deletes a preview's images", () => {
  const repositories = [
    'registry.local:5000/sless/team-pr-7-api',
    'registry.local:5000/sless/team-pr-7-api/cache',
  ];
  const job = previewImagesJob(settings, {
    previewNamespace: 'team-pr-7',
    preview,
    repositories,
    incarnation: 'abc/2026-12-06T10:00:00Z',
  });
  const pod = job.spec?.template.spec;
  const step = pod?.containers[0];

  it('runs `sless-build-tools delete` over every repository in the build namespace', () => {
    assert.equal(job.metadata?.namespace, settings.buildNamespace);
    assert.equal(step?.image, settings.buildToolsImage);
    assert.deepEqual(step?.args, ['delete', '-repository', repositories[0], '-repository', repositories[1]]);
    assert.equal(pod?.containers.length, 1);
    assert.equal(pod?.initContainers, undefined);
  });

  it('with the registry Secret, as the build tools steps have it, and nothing else', () => {
    assert.deepEqual(step?.env, [{ name: 'DOCKER_CONFIG', value: '/docker' }]);
    assert.deepEqual(step?.volumeMounts, [{ name: 'registry-config', mountPath: '/docker', readOnly: true }]);
    assert.equal(pod?.volumes?.[0]?.secret?.secretName, 'push-creds');
    assert.equal(pod?.automountServiceAccountToken, false);
    assert.equal(step?.securityContext?.runAsNonRoot, true);
    assert.equal(step?.securityContext?.readOnlyRootFilesystem, true);
  });

  it('collected as build Jobs are, never taken for a build, labelled with its preview', () => {
    assert.equal(job.spec?.ttlSecondsAfterFinished, settings.build.ttlSecondsAfterFinished);
    assert.equal(job.spec?.backoffLimit, settings.build.backoffLimit);
    assert.equal(pod?.restartPolicy, 'Never');
    const labels = job.metadata?.labels ?? {};
    assert.equal(labels['sless.kube5s.ru/component'], PREVIEW_IMAGES_COMPONENT);
    assert.notEqual(labels['sless.kube5s.ru/component'], 'build');
    assert.equal(labels['sless.kube5s.ru/function'], undefined);
    assert.equal(labels['app.kubernetes.io/managed-by'], 'sless');
    assert.equal(labels['sless.kube5s.ru/preview-of'], 'team');
    assert.equal(labels['sless.kube5s.ru/preview-number'], '7');
    assert.deepEqual(job.spec?.template.metadata?.labels, labels);
  });

  it('named by the preview and the removal: the same removal the same name, a later one another', () => {
    const name = previewImagesJobName('team-pr-7', 'abc/2026-12-06T10:00:00Z');
    assert.equal(job.metadata?.name, name);
    assert.match(name, /^images-team-pr-7-[0-9a-f]{10}$/);
    assert.notEqual(previewImagesJobName('team-pr-7', 'def/2026-12-06T11:00:00Z'), name);
    assert.ok(previewImagesJobName(`${'n'.repeat(58)}-pr-7`, 'x').length <= 63);
  });
});

describe('the Jobs of a prune (functions a push dropped from the preview) beside the removal’s', () => {
  const at = '2026-12-06T10:00:00Z';
  const name = (incarnation: string) => previewImagesJobName('team-pr-7', incarnation);

  it('a prune never takes the name of the removal at the same head and delivery', () => {
    assert.notEqual(name(pruneIncarnation('abc', at, ['api'])), name(removalIncarnation({ head: 'abc', updatedAt: at })));
    assert.equal(removalIncarnation({ head: 'abc', updatedAt: at }), `abc/${at}`);
    assert.equal(removalIncarnation({}), '/');
  });

  it('one name per delivery and set of functions: a retry of the same build finds its Job, the function dropped again at a later delivery gets another', () => {
    assert.equal(name(pruneIncarnation('abc', at, ['web', 'api', 'api'])), name(pruneIncarnation('abc', at, ['api', 'web'])));
    assert.notEqual(name(pruneIncarnation('abc', '2026-12-06T11:00:00Z', ['api'])), name(pruneIncarnation('abc', at, ['api'])));
    assert.notEqual(name(pruneIncarnation('abc', at, ['web'])), name(pruneIncarnation('abc', at, ['api'])));
  });
});

describe("a preview's build Jobs to stop", () => {
  const build = (namespace: string, name: string) =>
    buildJob(settings, { namespace, name, buildKey: `${name}-${'k'.repeat(60)}`, contextUrl: 'http://s3/ctx', kind: 'dependencies' });
  const jobs = [
    build('team-pr-7', 'api'),
    build('team-pr-7', 'web'),
    build('team', 'api'), // production's
    build('team-pr-8', 'api'), // another preview's
    previewImagesJob(settings, { previewNamespace: 'team-pr-7', preview, repositories: ['r'], incarnation: 'x' }),
  ];
  const names = (list: readonly { metadata?: { labels?: Record<string, string> } }[]) => list.map((j) => j.metadata?.labels?.['sless.kube5s.ru/function']);

  it('the preview goes: every build of its namespace, never another namespace’s nor an images Job', () => {
    assert.deepEqual(names(previewBuildJobs(jobs, 'team-pr-7')), ['api', 'web']);
  });

  it('functions pruned: only their builds', () => {
    assert.deepEqual(names(previewBuildJobs(jobs, 'team-pr-7', new Set(['web']))), ['web']);
    assert.deepEqual(previewBuildJobs(jobs, 'team-pr-7', new Set()), []);
  });
});

// The kaniko Job that turns a build context in S3 into an image. It runs in the build namespace so the
// registry push credentials and S3 keys never enter user namespaces.
import type { V1Job } from '@kubernetes/client-node';
import type { ControllerSettings } from '../settings.ts';
import { BUILD_S3_SECRET, DEFAULT_REGISTRY_SECRET } from '../settings.ts';
import { imageRepository, imageTag } from './build-key.ts';
import { ANNOTATIONS, LABELS, dnsLabel, functionLabels, shortHash } from './meta.ts';

export interface BuildJobInput {
  readonly namespace: string;
  readonly name: string;
  readonly buildKey: string;
  /** Bucket and key of the context tar.gz. */
  readonly s3Bucket: string;
  readonly s3Key: string;
}

/**
 * Deterministic from the function and its build key: a controller that restarts mid-build finds the Job it
 * already started (create answers 409) instead of starting a second one.
 */
export function buildJobName(namespace: string, name: string, key: string): string {
  return dnsLabel(['build', name, shortHash(`${namespace}/${name}/${key}`, 12)], 63);
}

export function buildJobLabels(namespace: string, name: string, key: string): Record<string, string> {
  return { ...functionLabels(namespace, name), [LABELS.component]: 'build', [LABELS.buildKey]: key.slice(0, 40) };
}

export function buildDestination(settings: Pick<ControllerSettings, 'registry'>, input: BuildJobInput): string {
  return `${imageRepository(settings.registry, input.namespace, input.name)}:${imageTag(input.buildKey)}`;
}

export function buildJob(settings: ControllerSettings, input: BuildJobInput): V1Job {
  const labels = buildJobLabels(input.namespace, input.name, input.buildKey);
  const registrySecret = settings.registrySecretName ?? DEFAULT_REGISTRY_SECRET;
  const build = settings.build ?? {};
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: buildJobName(input.namespace, input.name, input.buildKey),
      namespace: settings.buildNamespace,
      labels,
      annotations: { [ANNOTATIONS.buildKey]: input.buildKey },
    },
    spec: {
      backoffLimit: build.backoffLimit ?? 1,
      ttlSecondsAfterFinished: build.ttlSecondsAfterFinished ?? 3600,
      activeDeadlineSeconds: build.activeDeadlineSeconds ?? 1800,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'kaniko',
              image: settings.kanikoImage,
              args: [
                `--context=s3://${input.s3Bucket}/${input.s3Key}`,
                `--destination=${buildDestination(settings, input)}`,
                '--digest-file=/dev/termination-log',
                '--snapshot-mode=redo',
                '--use-new-run',
              ],
              env: [
                ...(settings.s3.endpoint
                  ? [
                      { name: 'S3_ENDPOINT', value: settings.s3.endpoint },
                      { name: 'S3_FORCE_PATH_STYLE', value: 'true' },
                    ]
                  : []),
                { name: 'AWS_REGION', value: settings.s3.region },
                secretEnv('AWS_ACCESS_KEY_ID', BUILD_S3_SECRET, 'AWS_ACCESS_KEY_ID'),
                secretEnv('AWS_SECRET_ACCESS_KEY', BUILD_S3_SECRET, 'AWS_SECRET_ACCESS_KEY'),
              ],
              terminationMessagePolicy: 'File',
              resources: {
                requests: { cpu: build.cpu ?? '500m', memory: build.memory ?? '1Gi' },
                limits: { memory: build.memory ?? '1Gi' },
              },
              volumeMounts: [{ name: 'docker-config', mountPath: '/kaniko/.docker' }],
            },
          ],
          volumes: [
            {
              name: 'docker-config',
              secret: {
                secretName: registrySecret,
                optional: true,
                items: [{ key: '.dockerconfigjson', path: 'config.json' }],
              },
            },
          ],
        },
      },
    },
  };
}

function secretEnv(name: string, secret: string, key: string) {
  return { name, valueFrom: { secretKeyRef: { name: secret, key, optional: true } } };
}

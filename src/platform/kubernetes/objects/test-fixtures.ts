// Shared inputs for the object builder tests.
import type { ControllerSettings } from '../settings.ts';
import type { FunctionResource } from './resources.ts';

export const settings: ControllerSettings = {
  registry: 'registry.local:5000/sless',
  kanikoImage: 'martizih/kaniko:v1.28.0',
  buildNamespace: 'sless-builds',
  runtimeImagePrefix: 'registry.local:5000/runtimes',
  s3: { endpoint: 'http://s3.local:8333', bucket: 'ctx', region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } },
  clusterDomain: 'cluster.local',
  imagePullSecrets: ['pull'],
  cacheDir: '/tmp/x',
};

export const fn: FunctionResource = {
  apiVersion: 'sless.kube5s.ru/v1alpha1',
  kind: 'Function',
  metadata: { name: 'hello', namespace: 'team-a', uid: 'uid-fn' },
  spec: {
    runtime: 'nodejs20',
    entrypoint: 'handler.handle',
    memoryMB: 256,
    timeoutSec: 10,
    env: { B: '2', A: '1' },
    envFromSecrets: ['db'],
    codeHash: `sha256:${'a'.repeat(64)}`,
    s3Bucket: 'ctx',
    s3Key: 'contexts/k.tar.gz',
  },
};

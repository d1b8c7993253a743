// Shared inputs for the object builder tests.
import { testControllerSettings } from '../../../../test/helpers/controller-settings.ts';
import type { FunctionResource } from './resources.ts';

export const settings = testControllerSettings({ imagePullSecrets: ['pull'] });

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

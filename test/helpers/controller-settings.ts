// Complete controller settings for tests, as the controller resolves its own (resolveControllerSettings:
// the one place that fills in the defaults): the platform and the object builders take nothing less, so a
// test names only what it changes.
import { DEFAULT_BUILD_NAMESPACE } from '../../src/platform/tenant-rules.ts';
import { resolveControllerSettings, type ControllerSettings, type ResolvedControllerSettings } from '../../src/platform/kubernetes/settings.ts';

/** The settings that have no default: a registry, images and S3 of no real host. */
const REQUIRED: ControllerSettings = {
  registry: 'registry.local:5000/sless',
  kanikoImage: 'martizih/kaniko:v1.28.0',
  buildNamespace: DEFAULT_BUILD_NAMESPACE,
  runtimeImagePrefix: 'registry.local:5000/runtimes',
  s3: { endpoint: 'http://s3.local:8333', bucket: 'ctx', region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } },
  clusterDomain: 'cluster.local',
  cacheDir: '/tmp/x',
};

/** `overrides` over REQUIRED, every default filled in; `limits` given in part keep the defaults of the rest. */
export function testControllerSettings(overrides: Partial<ControllerSettings> = {}): ResolvedControllerSettings {
  return resolveControllerSettings({ ...REQUIRED, ...overrides });
}

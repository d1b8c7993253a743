// What the Kubernetes preview suites share (kube-previews, kube-preview-prune): the real Gitea, a
// function's files, pull requests opened and delivered as Gitea has them, and the Jobs that delete a
// preview's images (read from the API server: no node runs them).
import assert from 'node:assert/strict';
import type { KubeConfig, V1Job } from '@kubernetes/client-node';
import type { PlatformPreviews, PreviewAnswer } from '../../src/platform/types.ts';
import { readPullRequest } from '../../src/webhook/pull-request.ts';
import { GiteaApi, giteaFromEnv } from '../helpers/gitea-api.ts';
import { eventually } from '../helpers/kube.ts';
import { batchApi } from './kube-controller-kit.ts';

/** The Gitea test service's API; a clear error when the suite runs without it. */
export function previewsGitea(): GiteaApi {
  const env = giteaFromEnv();
  if (!env) throw new Error('this test needs the gitea test service: SLESS_TEST_SERVICES=kube,s3,git,gitea (built by .ci/install.d/40-gitea.sh)');
  return new GiteaApi(env);
}

/** The files of Node function `name` whose answer names `version`. */
export const fn = (name: string, version: string) => ({
  [`functions/${name}/function.yaml`]: 'runtime: nodejs20\n',
  [`functions/${name}/handler.js`]: `exports.handle = async () => ({ fn: '${name}', version: '${version}' });\n`,
});

/** A pull request of the Gitea repository `fullName` from `branch` to main (Gitea takes in a pushed branch in the background: refused with 404 for a moment). */
export const openPullRequest = async (api: GiteaApi, fullName: string, branch: string) =>
  (await eventually(() => api.call<{ number: number }>('POST', `/repos/${fullName}/pulls`, { head: branch, base: 'main', title: branch }), { timeoutMs: 30_000, intervalMs: 250 })).number;

/**
 * Gitea's delivery of `action` for PR `number` of repository `fullName`, handed to the previews of
 * FunctionRepository `namespace/fns`: its pull request JSON as Gitea has it once it has taken in the push
 * of `head` (Gitea updates a PR's head in the background, and delivers only then).
 */
export async function deliverPullRequest(
  to: { readonly api: GiteaApi; readonly fullName: string; readonly previews: PlatformPreviews; readonly namespace: string },
  number: number,
  action: string,
  head?: string,
): Promise<PreviewAnswer> {
  const pr = await eventually(
    async () => {
      const p = await to.api.call<{ head?: { sha?: string } } & Record<string, unknown>>('GET', `/repos/${to.fullName}/pulls/${number}`);
      if (head && p.head?.sha !== head) throw new Error(`Gitea has not taken in ${head} for #${number} yet`);
      return p;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  const event = readPullRequest('gitea', { action, number, pull_request: pr });
  if ('error' in event) throw new Error(event.error);
  return to.previews.pullRequest(to.namespace, 'fns', event, 'test delivery');
}

/** Every Job deleting images of preview `number` of namespace `ns` (its removal's and each prune's). */
export const previewImageJobs = async (kc: KubeConfig, buildNs: string, ns: string, number: number): Promise<V1Job[]> =>
  (await batchApi(kc).listNamespacedJob({ namespace: buildNs, labelSelector: `sless.kube5s.ru/component=preview-images,sless.kube5s.ru/preview-of=${ns},sless.kube5s.ru/preview-number=${number}` })).items;

/** The repositories such a Job empties, the registry left out (`<ns>-pr-<N>-<fn>[/cache|/deps]`). */
export function deletedRepositories(job: V1Job | undefined, ns: string): string[] {
  const args = job?.spec?.template.spec?.containers[0]?.args;
  if (!args) throw new Error(`no Job deleting the images of a preview of ${ns}`);
  assert.equal(args[0], 'delete');
  return args.filter((_, i) => args[i - 1] === '-repository').map((r) => r.slice(r.lastIndexOf('/', r.indexOf(`${ns}-pr-`)) + 1));
}

/** Image, layer cache and dependencies images of each function `names` in preview namespace `previewNs`. */
export const previewRepositories = (previewNs: string, names: string[]) => names.flatMap((n) => [`${previewNs}-${n}`, `${previewNs}-${n}/cache`, `${previewNs}-${n}/deps`]);

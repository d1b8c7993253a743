// Writes a function Deployment's replica count through its scale subresource (issue 29): the one write
// scaling costs, conditioned on the resourceVersion the writer saw, so the leader's autoscaler and a
// replica waking the function can never undo each other (the loser gets 409 and looks again). Field
// manager `sless-autoscaler`: managedFields tell these writes from the reconciler's applies.
import type { JsonApi } from '../api-client/json-api.ts';
import { CONTENT_TYPES } from '../api-client/json-api.ts';
import { apiStatusCode } from '../api-errors.ts';

export const SCALE_FIELD_MANAGER = 'sless-autoscaler';

export type ScaleWrite = 'written' | 'conflict' | 'missing';

export class ScaleSubresource {
  /** Writes made (tests and the benchmark count them). */
  writes = 0;
  /** Of those, the ones refused for a newer resourceVersion (409): they changed nothing. */
  conflicts = 0;

  constructor(private readonly json: JsonApi) {}

  /**
   * Sets `replicas` unless the Deployment changed since `resourceVersion` (conflict) or is gone
   * (missing). Without a resourceVersion the write is unconditional.
   */
  async set(namespace: string, name: string, replicas: number, resourceVersion: string | undefined): Promise<ScaleWrite> {
    const path = `/apis/apps/v1/namespaces/${namespace}/deployments/${name}/scale?fieldManager=${SCALE_FIELD_MANAGER}`;
    const body = { ...(resourceVersion ? { metadata: { resourceVersion } } : {}), spec: { replicas } };
    this.writes++;
    try {
      await this.json.send('PATCH', path, body, CONTENT_TYPES.merge);
      return 'written';
    } catch (err) {
      const code = apiStatusCode(err);
      if (code === 409) {
        this.conflicts++;
        return 'conflict';
      }
      if (code === 404) return 'missing';
      throw new Error(`scaling Deployment ${namespace}/${name} to ${replicas} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  /** The Deployment's replicas and resourceVersion as the API server has them now (a wake before the watches listed). */
  async read(namespace: string, name: string): Promise<{ replicas: number; resourceVersion: string | undefined } | undefined> {
    try {
      const scale = await this.json.send<{ metadata?: { resourceVersion?: string }; spec?: { replicas?: number } }>(
        'GET',
        `/apis/apps/v1/namespaces/${namespace}/deployments/${name}/scale`,
      );
      return { replicas: scale.spec?.replicas ?? 0, resourceVersion: scale.metadata?.resourceVersion };
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  }
}

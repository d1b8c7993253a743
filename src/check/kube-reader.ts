// Plain JSON reads of the API server for `sless check` (JsonApi: client-node's authentication, no model
// classes, so a CRD's schema comes back exactly as stored). A 404 is `undefined`, not an error.
import type { KubeConfig } from '@kubernetes/client-node';
import { apiStatusCode } from '../platform/kubernetes/api-errors.ts';
import { JsonApi } from '../platform/kubernetes/api-client/json-api.ts';

export interface KubeReader {
  get<T>(path: string): Promise<T | undefined>;
  post<T>(path: string, body: unknown): Promise<T>;
}

export function kubeReader(kc: KubeConfig): KubeReader {
  const api = new JsonApi(kc);
  return {
    async get<T>(path: string): Promise<T | undefined> {
      try {
        return await api.send<T>('GET', path);
      } catch (err) {
        if (apiStatusCode(err) === 404) return undefined;
        throw err;
      }
    },
    post: <T>(path: string, body: unknown) => api.send<T>('POST', path, body),
  };
}

// The controller's writes as plain JSON over undici's request(). client-node's generated clients send each
// call through WHATWG fetch (Request, Headers, web streams) and pass both bodies through ObjectSerializer's
// model classes (every field walked, timestamps made Dates): in a CPU profile of 1,000 functions created
// across 100 repositories that was ~12 s of the controller's 68 CPU s (fetch 5.2, the answer's parse and
// deserialize 2.8, the body's serialize 1.8), for objects the controller builds and reads as plain JSON.
// Authentication and connections stay client-node's (authenticated.ts), so a request here is the request
// client-node would make, less the layers, and the write gate's signal aborts it. Failures are client-node's
// ApiException, the body kept as text, so isStatus/apiMessage hold.
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { request } from 'undici';
import { authenticate, clusterServer } from './authenticated.ts';

export type JsonMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const CONTENT_TYPES = {
  json: 'application/json',
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  jsonPatch: 'application/json-patch+json',
} as const;

export class JsonApi {
  constructor(private readonly kubeConfig: KubeConfig) {}

  /** `path` with its query (`/apis/…?fieldManager=sless`); answers the parsed body (undefined when empty). */
  async send<T>(method: JsonMethod, path: string, body?: unknown, contentType: string = CONTENT_TYPES.json): Promise<T> {
    const { url, headers, dispatcher, signal } = await authenticate(this.kubeConfig, clusterServer(this.kubeConfig, `${method} ${path}`) + path, method);
    const res = await request(url, {
      method,
      // The write gate's (write-gate.ts): a write still in flight when leadership ends is aborted.
      ...(signal ? { signal } : {}),
      headers: { ...headers, accept: CONTENT_TYPES.json, ...(body === undefined ? {} : { 'content-type': contentType }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(dispatcher ? { dispatcher } : {}),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
      throw new ApiException(res.statusCode, `HTTP-Code: ${res.statusCode}\nMessage: ${method} ${path}\nBody: ${text}`, text, headers);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

// What one API request is, for counting (sless_kube_requests_total): its verb as the API server's own
// metrics and audit log name it (a GET of a collection is LIST, with watch=true it is WATCH) and the
// resource (plural, `functions/status` for a subresource). Both labels must stay few whatever the
// controller is pointed at: names and namespaces are never kept, and a segment that does not look like a
// resource plural becomes `other`.

export type ApiVerb = 'GET' | 'LIST' | 'WATCH' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OTHER';

export interface ApiRequestKind {
  readonly verb: ApiVerb;
  readonly resource: string;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** A plural or subresource: lowercase DNS-label characters, as the API server requires of them. */
const SEGMENT = /^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/;
const WATCH_PARAM = /(?:^|&)watch=(?:true|1)(?:&|$)/;

/** `path`: path and query as sent (`/apis/group/version/namespaces/ns/plural/name/sub?…`). */
export function apiRequestKind(method: string, path: string): ApiRequestKind {
  const q = path.indexOf('?');
  const parts = (q < 0 ? path : path.slice(0, q)).split('/').filter(Boolean);
  let rest: string[];
  if (parts[0] === 'api') rest = parts.slice(2);
  else if (parts[0] === 'apis') rest = parts.slice(3);
  else return { verb: verbOf(method, false, false), resource: 'other' };
  // Discovery: /api, /api/v1, /apis, /apis/group/version (client-node's KubernetesObjectApi maps kinds to plurals so).
  if (rest.length === 0) return { verb: verbOf(method, false, false), resource: 'discovery' };
  // The old watch prefix (/api/v1/watch/...), which client-go no longer sends but the API server still serves.
  const watchPrefix = rest[0] === 'watch';
  if (watchPrefix) rest = rest.slice(1);
  // namespaces/<ns>/<plural>/... is namespaced; namespaces, namespaces/<ns> and namespaces/<ns>/<sub> (finalize, status) are the Namespace itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && (rest[2] === 'finalize' || rest[2] === 'status'))) rest = rest.slice(2);
  const [plural = '', name, sub] = rest;
  const watch = watchPrefix || (q >= 0 && WATCH_PARAM.test(path.slice(q + 1)));
  const resource = !SEGMENT.test(plural) ? 'other' : sub === undefined ? plural : SEGMENT.test(sub) ? `${plural}/${sub}` : 'other';
  return { verb: verbOf(method, watch, name === undefined), resource };
}

function verbOf(method: string, watch: boolean, collection: boolean): ApiVerb {
  const m = method.toUpperCase();
  if (!METHODS.has(m)) return 'OTHER';
  if (m === 'GET' && watch) return 'WATCH';
  if (m === 'GET' && collection) return 'LIST';
  return m as ApiVerb;
}

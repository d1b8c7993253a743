// The connections the controller's API requests go over: HTTP/1.1 only, watches apart from calls.
//
// HTTP/1.1 because undici 8 offers h2 by ALPN by default and the API server takes it; then Node 22's HTTP/2
// client aborted the controller (std::bad_alloc asking for 32 GiB in Http2Session::CopyDataIntoOutgoing,
// from a core dump) when requests in flight were cancelled, as the write gate does when leadership ends:
// 2 SIGTERMs of 4 in the kube-leader tests, none of 18 over HTTP/1.1.
//
// Over HTTP/1.1 a connection carries one request at a time, so two pools. A watch holds its connection for
// as long as it runs (one per informer and namespace, however many namespaces are watched), so watches get
// a pool without a bound. Calls share a bounded pool and queue for it: unbounded, a 1,000-function sync
// opened 123 TLS connections to the API server (RSS +15 MB, and a handshake each).
import { Agent, type Dispatcher } from 'undici';
import { apiRequestKind } from './api-request-kind.ts';

/** Connections for calls (not watches) to one API server. */
export const API_CALL_CONNECTIONS = 16;
/** Idle connections close after this; the API server's own idle timeout (90 s) is longer, so it never races it. */
const KEEP_ALIVE_MS = 30_000;

/** A dispatcher for one API server; `connect` holds client-node's TLS options (undefined: none). */
export function apiDispatcher(connect: Agent.Options['connect']): Dispatcher {
  const common = { allowH2: false, keepAliveTimeout: KEEP_ALIVE_MS, ...(connect ? { connect } : {}) };
  const watches = new Agent(common);
  const calls = new Agent({ ...common, connections: API_CALL_CONNECTIONS });
  return calls.compose((dispatch) => (opts, handler) =>
    apiRequestKind(opts.method, opts.path).verb === 'WATCH' ? watches.dispatch(opts, handler) : dispatch(opts, handler),
  );
}

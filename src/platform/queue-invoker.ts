// One call of a function for one queue message: the body as sent, through the same endpoint /fn
// uses (Platform.resolveEndpoint), with the function's own timeout. Never throws: every way a call
// can fail becomes a CallOutcome with a status in /fn's terms (502 unreachable, 503 not ready, 504
// timed out) and a one-line error for the x-sless-error header.
import { Agent, request, errors as undiciErrors } from 'undici';
import type { Endpoint, Platform } from './types.ts';
import { headerText } from '../queue/delivery.ts';
import type { Invoke, InvokeRequest, InvokeResult } from '../queue/invoke.ts';

export type { Invoke, InvokeRequest, InvokeResult };


/** Keep-alive connections to the functions, shared by every consumer of the process. */
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256 });

export function httpInvoker(platform: Pick<Platform, 'resolveEndpoint' | 'scaling'>): Invoke {
  const invoke = invokeOnce(platform);
  return async (req) => {
    // A delivery counts as a call in flight, like a /fn call: a backlog scales the function out.
    const ended = platform.scaling?.requestBegan(req.namespace, req.function);
    try {
      return await invoke(req);
    } finally {
      ended?.();
    }
  };
}

function invokeOnce(platform: Pick<Platform, 'resolveEndpoint' | 'scaling'>): Invoke {
  const resolve = (req: { namespace: string; function: string }) =>
    platform.resolveEndpoint(req.namespace, req.function).catch((err: unknown) => ({ kind: 'not-ready' as const, reason: (err as Error).message }));
  return async (req) => {
    let endpoint = await forQueues(await resolve(req));
    if (endpoint.kind === 'idle' && platform.scaling) {
      // Scaled to zero: a message wakes it as a /fn call does (one wake however many deliveries wait).
      try {
        await platform.scaling.wake(req.namespace, req.function);
      } catch (err) {
        return failed(503, `function ${req.namespace}/${req.function} could not be woken: ${(err as Error).message}`);
      }
      endpoint = await forQueues(await resolve(req));
    }
    switch (endpoint.kind) {
      case 'idle':
        return failed(503, `function ${req.namespace}/${req.function} is scaled to zero and did not wake`);
      case 'not-found':
        return failed(404, `function ${req.namespace}/${req.function} does not exist`);
      case 'not-ready':
        return failed(503, `function ${req.namespace}/${req.function} is not ready: ${endpoint.reason}`);
      case 'disabled':
        // http is off and the platform runs no server for queues (it has no queue triggers, as it sees them).
        return failed(503, `function ${req.namespace}/${req.function} has http.enabled: false and no server running for its queue triggers`);
      case 'ready':
        break;
    }
    const timeoutMs = endpoint.timeoutSec * 1000;
    // A pod picked as /fn picks it (Kubernetes with SLESS_ROUTE_TO_PODS), else the Service / process.
    const replica = endpoint.replicas?.pick();
    let refused = false;
    try {
      const res = await request(`${replica?.baseUrl ?? endpoint.baseUrl}/`, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const answer = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode >= 200 && res.statusCode < 300) return { outcome: { ok: true, status: res.statusCode }, responseBytes: answer.length };
      return { outcome: { ok: false, status: res.statusCode, error: headerText(`HTTP ${res.statusCode}: ${answer.toString('utf8', 0, 500)}`) }, responseBytes: answer.length };
    } catch (err) {
      if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
        return failed(504, `timed out after ${endpoint.timeoutSec} s (timeout_sec)`);
      }
      const code = (err as { code?: string }).code;
      refused = code === 'ECONNREFUSED';
      return failed(502, `unreachable: ${code ?? ''} ${(err as Error).message}`);
    } finally {
      replica?.release(refused ? 'refused' : 'done');
    }
  };
}

/** A queue-only function (http.enabled: false): /fn's "disabled" carries where its queue deliveries go. */
function forQueues(endpoint: Endpoint): Endpoint {
  return endpoint.kind === 'disabled' && endpoint.forQueues ? endpoint.forQueues : endpoint;
}

function failed(status: number, error: string): InvokeResult {
  return { outcome: { ok: false, status, error: headerText(error) }, responseBytes: 0 };
}

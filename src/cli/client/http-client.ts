// The client's one way to talk to a sless server: /v1 JSON requests with the bearer token, and raw
// calls for /fn. Every failure becomes a one-line CliError that names the request and what to do.
import { CliError, oneLine } from './errors.ts';
import type { Target } from './settings.ts';

/** A /v1 answer that was not 2xx, kept whole so a command can react to one status (e.g. 404). */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** What to do about a status, appended to the server's own message. */
function hintFor(status: number, target: Target): string {
  if (status === 401)
    return '; check SLESS_API_TOKEN (or run sless login again): the server did not accept the token';
  if (status === 403)
    return `; the token may not use namespace "${target.namespace}": drop -n/SLESS_NAMESPACE to use the token's own, or use an admin token`;
  return '';
}

export class ApiClient {
  constructor(
    readonly target: Target,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /** `/v1/namespaces/{ns}` + rest, each name segment encoded. */
  nsPath(...segments: string[]): string {
    return `/v1/namespaces/${[this.target.namespace, ...segments].map(encodeURIComponent).join('/')}`;
  }

  async send(
    method: string,
    urlPath: string,
    init: {
      headers?: Record<string, string> | [string, string][];
      body?: Buffer | string;
      bearer?: boolean;
    } = {},
  ): Promise<Response> {
    const headers = new Headers(init.headers);
    if (init.bearer !== false) headers.set('authorization', `Bearer ${this.target.token}`);
    const url = `${this.target.endpoint}${urlPath}`;
    try {
      return await this.fetchImpl(url, { method, headers, body: init.body, redirect: 'manual' });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach ${this.target.endpoint} (${cause?.code ?? cause?.message ?? oneLine(err)}); check SLESS_ENDPOINT or run sless login --endpoint URL`,
      );
    }
  }

  /** A /v1 request whose 2xx answer is JSON (or empty: 204). */
  async json<T>(method: string, urlPath: string, body?: unknown): Promise<T> {
    const res = await this.send(
      method,
      urlPath,
      body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
    );
    const text = await res.text();
    if (!res.ok) throw this.failure(res, text, method, urlPath);
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(
        `${method} ${urlPath} answered ${res.status} with a body that is not JSON; is ${this.target.endpoint} a sless server?`,
      );
    }
  }

  /** A streamed /v1 answer (e.g. .../logs): the answer when 2xx, else its ApiError. */
  async stream(urlPath: string): Promise<Response> {
    const res = await this.send('GET', urlPath);
    if (!res.ok) throw this.failure(res, await res.text(), 'GET', urlPath);
    return res;
  }

  /** A non-2xx /v1 answer as one line: the server's own message and what to do about it. */
  private failure(res: Response, text: string, method: string, urlPath: string): ApiError {
    let code: string | undefined;
    let message = text.trim().slice(0, 300) || res.statusText;
    try {
      const parsed = JSON.parse(text) as { error?: unknown; code?: unknown };
      if (typeof parsed.error === 'string') message = parsed.error;
      if (typeof parsed.code === 'string') code = parsed.code;
    } catch {
      // Not the /v1 error shape (a proxy in between?): keep the raw text.
    }
    return new ApiError(
      res.status,
      code,
      `${method} ${urlPath} answered ${res.status}: ${oneLine(message)}${hintFor(res.status, this.target)}`,
    );
  }

  get<T>(urlPath: string): Promise<T> {
    return this.json<T>('GET', urlPath);
  }
}

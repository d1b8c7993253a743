// sless Node.js runtime server (CONTRACT.md §4), standard library only. Shared by nodejs20 and
// nodejs22: runtimes/<runtime>/server.js only imports this file (see runtimes/README.md).
//
//   PORT=9000 SLESS_FUNCTION_DIR=./hello SLESS_ENTRYPOINT=handler.handle node runtimes/nodejs20/server.js
//   SLESS_MODE=job SLESS_EVENT='{"n":1}' node runtimes/nodejs20/server.js    one run, result JSON on stdout
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const env = process.env;
const port = Number(env.PORT || 8080);
// Unset: every interface (what an image needs); `sless dev` sets 127.0.0.1.
const bindAddress = env.SLESS_BIND_ADDRESS || undefined;
const functionDir = path.resolve(env.SLESS_FUNCTION_DIR || '/app/function');
const entrypoint = env.SLESS_ENTRYPOINT || 'handler.handle';
const timeoutSec = Number(env.SLESS_TIMEOUT_SEC || 30);
const functionName = env.SLESS_FUNCTION_NAME || '';
const namespace = env.SLESS_NAMESPACE || '';

function log(message) {
  process.stderr.write(`sless-runtime: ${message}\n`);
}

function fail(message) {
  log(message);
  process.exit(1);
}

/** A .js file's module format, decided by the function folder's own package.json only: the
 * function folder is the package boundary, as it is in the image (/app/function has nothing above
 * it). Without this, a function run from inside a `"type": "module"` project would be loaded as ESM. */
function functionIsEsm() {
  const pkgPath = path.join(functionDir, 'package.json');
  if (!existsSync(pkgPath)) return false;
  try {
    return JSON.parse(readFileSync(pkgPath, 'utf8')).type === 'module';
  } catch (err) {
    fail(`cannot read ${pkgPath}: ${err.message}`);
    return false;
  }
}

/** Makes require() compile the function's own .js files as CommonJS even when a package.json above
 * the function folder says "type": "module". Dependencies in node_modules keep their own format. */
function treatFunctionJsAsCommonJs() {
  const original = Module._extensions['.js'];
  const inside = functionDir + path.sep;
  Module._extensions['.js'] = function loadJs(module, filename) {
    if (filename.startsWith(inside) && !filename.includes(`${path.sep}node_modules${path.sep}`)) {
      module._compile(readFileSync(filename, 'utf8'), filename);
      return;
    }
    original.call(this, module, filename);
  };
}

async function loadHandler() {
  const dot = entrypoint.lastIndexOf('.');
  if (dot <= 0 || dot === entrypoint.length - 1) {
    fail(`SLESS_ENTRYPOINT "${entrypoint}" must look like "<file>.<export>", e.g. "handler.handle"`);
  }
  const file = entrypoint.slice(0, dot);
  const exportName = entrypoint.slice(dot + 1);
  const candidates = ['.js', '.mjs', '.cjs', ''].map((ext) => path.join(functionDir, file + ext));
  const filename = candidates.find((f) => existsSync(f) && !f.endsWith(path.sep));
  if (!filename) {
    fail(
      `entrypoint "${entrypoint}": none of ${candidates.slice(0, 3).join(', ')} exists (SLESS_FUNCTION_DIR=${functionDir})`,
    );
  }
  let exported;
  try {
    const esm = filename.endsWith('.mjs') || (filename.endsWith('.js') && functionIsEsm());
    if (esm) {
      const ns = await import(pathToFileURL(filename).href);
      exported = ns[exportName] ?? ns.default?.[exportName];
    } else {
      treatFunctionJsAsCommonJs();
      exported = createRequire(filename)(filename)[exportName];
    }
  } catch (err) {
    const hint =
      err instanceof SyntaxError && /\b(import|export)\b/.test(err.message)
        ? ' (ES module syntax: add "type": "module" to the function\'s package.json or name the file .mjs)'
        : '';
    fail(`entrypoint "${entrypoint}": loading ${filename} failed${hint}: ${err.stack || err}`);
  }
  if (typeof exported !== 'function') {
    fail(
      `entrypoint "${entrypoint}": ${filename} has no exported function "${exportName}" (found ${typeof exported})`,
    );
  }
  return exported;
}

function deadline() {
  return new Date(Date.now() + timeoutSec * 1000).toISOString();
}

/** Repeated query keys and headers are joined with "," (as API Gateway's payload 2.0 does). */
function joinValues(entries) {
  const out = {};
  for (const [key, value] of entries) out[key] = key in out ? `${out[key]},${value}` : value;
  return out;
}

function httpContext(req, url) {
  const headers = {};
  for (const [key, value] of Object.entries(req.headers)) {
    headers[key] = Array.isArray(value) ? value.join(',') : value;
  }
  return {
    method: req.method,
    path: url.pathname,
    query: joinValues(url.searchParams),
    headers,
    function: functionName,
    namespace,
    deadline: deadline(),
  };
}

/** The JSON body, the body as a string when it is not JSON, {} when there is none. */
function parseEvent(raw) {
  if (raw.length === 0) return {};
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function invoke(handler, event, context) {
  return handler.length >= 2 ? handler(event, context) : handler(event);
}

function isResponseObject(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    typeof value.statusCode === 'number'
  );
}

function hasHeader(headers, name) {
  return Object.keys(headers).some((h) => h.toLowerCase() === name);
}

/** Maps a handler's return value to {status, headers, body} (CONTRACT.md §4). */
function toResponse(value) {
  if (value === undefined || value === null) return { status: 204, headers: {}, body: '' };
  if (typeof value === 'string')
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: value };
  if (value instanceof Uint8Array)
    return { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: value };
  if (isResponseObject(value)) {
    if (!Number.isInteger(value.statusCode) || value.statusCode < 100 || value.statusCode > 599) {
      throw new Error(`statusCode ${value.statusCode} is not an HTTP status (100-599)`);
    }
    const headers = {};
    for (const [k, v] of Object.entries(value.headers ?? {})) headers[k] = String(v);
    const body = value.body;
    if (body === undefined || body === null) return { status: value.statusCode, headers, body: '' };
    if (typeof body === 'string' || body instanceof Uint8Array) {
      if (!hasHeader(headers, 'content-type'))
        headers['content-type'] =
          typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream';
      return { status: value.statusCode, headers, body };
    }
    if (!hasHeader(headers, 'content-type')) headers['content-type'] = 'application/json';
    return { status: value.statusCode, headers, body: JSON.stringify(body) };
  }
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) };
}

function errorMessage(err) {
  return err instanceof Error ? err.message : String(err);
}

async function runJob(handler) {
  const raw = env.SLESS_EVENT ?? '';
  const context = {
    method: '',
    path: '',
    query: {},
    headers: {},
    function: functionName,
    namespace,
    deadline: deadline(),
  };
  try {
    const result = await invoke(handler, parseEvent(Buffer.from(raw, 'utf8')), context);
    writeResult(`${JSON.stringify(result ?? null)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof Error && err.stack ? err.stack : String(err)}\n`);
    return 1;
  }
}

function serve(handler) {
  let draining = false;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', async () => {
      let response;
      try {
        response = toResponse(
          await invoke(handler, parseEvent(Buffer.concat(chunks)), httpContext(req, url)),
        );
      } catch (err) {
        log(
          `handler error on ${req.method} ${url.pathname}: ${err instanceof Error && err.stack ? err.stack : String(err)}`,
        );
        response = {
          status: 500,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ error: errorMessage(err) }),
        };
      }
      // While draining, a response closes its connection rather than leaving it idle until keepAliveTimeout.
      if (draining) res.setHeader('connection', 'close');
      try {
        res.writeHead(response.status, response.headers).end(response.body);
      } catch (err) {
        // e.g. a header value with a newline: the handler's mistake, reported like a thrown error
        log(`invalid response on ${req.method} ${url.pathname}: ${errorMessage(err)}`);
        if (!res.headersSent) {
          res
            .writeHead(500, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: errorMessage(err) }));
        } else res.destroy();
      }
    });
  });
  const where = bindAddress ? `${bindAddress}:${port}` : `port ${port}`;
  server.on('error', (err) => fail(`cannot listen on ${where}: ${err.message}`));
  server.listen({ port, host: bindAddress, backlog: 511 }, () => log(`serving ${entrypoint} from ${functionDir} on ${where}`));

  // SIGTERM (Kubernetes, sless dev): stop accepting, let in-flight requests finish, then exit.
  const stop = (signal) => {
    log(`${signal}: draining`);
    draining = true;
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), Math.min(timeoutSec, 25) * 1000).unref();
  };
  process.once('SIGTERM', stop).once('SIGINT', stop);
  // A promise the handler forgot about must not take every other request in flight down with it.
  process.on('unhandledRejection', (err) =>
    log(`unhandled rejection: ${err instanceof Error && err.stack ? err.stack : String(err)}`),
  );
}

// In job mode stdout carries the result line only: the function's own output (console.log included)
// goes to stderr.
const writeResult = process.stdout.write.bind(process.stdout);
if (env.SLESS_MODE === 'job') process.stdout.write = process.stderr.write.bind(process.stderr);

const handler = await loadHandler();
if (env.SLESS_MODE === 'job') process.exitCode = await runJob(handler);
else serve(handler);

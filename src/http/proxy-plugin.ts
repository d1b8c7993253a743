// The /fn routes inside fastify. In a listening server, app/build-app.ts hands /fn requests to
// proxyRequest before fastify's router (the proxy needs none of fastify's per-request machinery,
// and skipping it is most of the proxy's overhead); these routes serve app.inject() and are the
// routes' declaration. No content-type parser reads the body here: it is streamed as is.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { proxyRequest, type ProxyContext } from './proxy-request.ts';

export type ProxyPluginOptions = Omit<ProxyContext, 'log'>;

export function proxyPlugin(app: FastifyInstance, opts: ProxyPluginOptions, done: (err?: Error) => void): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null));
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    await proxyRequest(request.raw, reply.raw, { ...opts, log: request.log });
  };
  // The invocation log is /fn's access log; per-request info lines would cost more than the proxying.
  app.all('/fn/:namespace/:name', { logLevel: 'warn' }, handler);
  app.all('/fn/:namespace/:name/*', { logLevel: 'warn' }, handler);
  done();
}

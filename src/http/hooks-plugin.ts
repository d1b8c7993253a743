// POST /hooks/{namespace}/{repository}: push webhooks from Gitea, GitHub and GitLab. The raw body is
// kept as bytes (signatures cover the exact bytes sent), verified against the repository's
// webhookSecret, and a push to the watched branch asks the platform for a sync and answers 202 at
// once. The platform answers the target from its caches (on Kubernetes: a watch and a kept Secret read,
// so an unknown name or a forged delivery costs the API server nothing); a signature that does not match
// gets one fresh look, for a rotated secret. Coalescing bursts, "one more sync after a push during a sync" and harmless replays are the
// platform's requestSync job: it must be cheap and idempotent (it only marks a sync as wanted).
// A pull-request delivery goes to the platform's previews (docs/previews.md), which decide and answer.
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/metrics.ts';
import type { Platform } from '../platform/types.ts';
import { parseWebhook } from '../webhook/parse-webhook.ts';
import { isDnsLabel } from './dns-label.ts';
import { HttpError } from './errors.ts';
import { decideWebhook } from './webhook-decision.ts';

export interface HooksPluginOptions {
  readonly platform: Platform;
  readonly metrics: Metrics;
  readonly maxBodyBytes: number;
}

export function hooksPlugin(app: FastifyInstance, opts: HooksPluginOptions, done: (err?: Error) => void): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.maxBodyBytes }, (_request, body, parsed) => parsed(null, body));

  app.post<{ Params: { namespace: string; repository: string } }>('/hooks/:namespace/:repository', async (request, reply) => {
    const { namespace, repository } = request.params;
    const count = (provider: string, outcome: string) => opts.metrics.webhooks.inc({ provider, outcome });
    const target = isDnsLabel(namespace) && isDnsLabel(repository) ? await opts.platform.webhookTarget(namespace, repository) : undefined;
    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    // Refusals are logged with what a user needs to find the delivery: never a secret or a header value.
    const refused = (v: { provider: string; deliveryId?: string }, reason: string) =>
      request.log.warn({ provider: v.provider, delivery: v.deliveryId, namespace, repository, reason }, 'webhook refused');
    if (!target) {
      count('unknown', 'not_found');
      refused(parseWebhook({ headers: request.headers, rawBody, secret: undefined }), 'no such repository takes webhooks here');
      // Say no more than "not here": whether the namespace exists is nobody's business.
      throw new HttpError('repository_not_found', `no repository ${namespace}/${repository} takes webhooks here`);
    }
    let verdict = parseWebhook({ headers: request.headers, rawBody, secret: target.secret });
    let decision = decideWebhook(verdict, target.branch);
    if (decision.outcome === 'unauthorized') {
      // The platform may have answered from a cache: a rotated secret gets one fresh look (rate-limited there).
      const fresh = await opts.platform.webhookTarget(namespace, repository, { refresh: true });
      if (fresh && fresh.secret !== target.secret) {
        verdict = parseWebhook({ headers: request.headers, rawBody, secret: fresh.secret });
        decision = decideWebhook(verdict, fresh.branch);
      }
    }
    count(decision.provider, decision.outcome);
    switch (decision.outcome) {
      case 'unauthorized':
        refused(verdict, decision.message);
        throw new HttpError('unauthorized', decision.message);
      case 'bad_request':
        refused(verdict, decision.message);
        throw new HttpError('bad_request', decision.message);
      case 'ignored':
        return reply.code(200).send({ status: 'ignored', reason: decision.message });
      case 'pull_request': {
        const previews = opts.platform.previews;
        const event = decision.pullRequest;
        if (!previews || !event) return reply.code(200).send({ status: 'ignored', reason: 'this server builds no pull-request previews' });
        const answer = await previews.pullRequest(namespace, repository, event, decision.reason);
        return reply.code(answer.outcome === 'accepted' ? 202 : 200).send({ status: answer.outcome, reason: answer.message });
      }
      case 'accepted':
        await opts.platform.requestSync(namespace, repository, decision.reason, decision.head ? { head: decision.head } : undefined);
        return reply.code(202).send({ status: 'sync requested', reason: decision.message });
    }
  });
  done();
}

// Composes the leader's autoscaler (kube-autoscaler.ts) from its parts: this replica's counts, the other
// replicas' (found through the metrics Service's EndpointSlices when running in a cluster), and the
// scale subresource written through the leader's gated client (its writes stop with its leadership).
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { createMetrics } from '../../../metrics/metrics.ts';
import { JsonApi } from '../api-client/json-api.ts';
import type { ControllerLogger } from '../controller-logger.ts';
import type { ResolvedControllerSettings } from '../settings.ts';
import { fetchCountsReport } from './counts-endpoint.ts';
import { CountsGatherer } from './counts-gatherer.ts';
import { KubeAutoscaler, type AutoscalerCaches } from './kube-autoscaler.ts';
import { PeerDiscovery } from './peer-discovery.ts';
import type { ReplicaCounts } from './replica-counts.ts';
import { ScaleSubresource } from './scale-subresource.ts';

export interface AutoscalerStartOptions {
  readonly kubeConfig: KubeConfig;
  readonly caches: AutoscalerCaches;
  readonly counts: ReplicaCounts;
  readonly settings: Pick<ResolvedControllerSettings, 'systemNamespace' | 'limits'>;
  /** POD_NAME: in a cluster the other replicas are found through EndpointSlices, this pod left out. */
  readonly selfPod: string | undefined;
  readonly registry: Registry;
  readonly logger: ControllerLogger;
  readonly tickMs?: number;
  /** The other replicas' counts URLs, instead of EndpointSlices (controllers outside a cluster: tests). */
  readonly peers?: () => Promise<readonly string[]>;
}

export function startAutoscaler(opts: AutoscalerStartOptions): KubeAutoscaler {
  const json = new JsonApi(opts.kubeConfig);
  const discovery = opts.selfPod ? new PeerDiscovery(json, opts.settings.systemNamespace, opts.selfPod) : undefined;
  const gatherer = new CountsGatherer({
    self: () => opts.counts.report(),
    peers: opts.peers ?? (discovery ? () => discovery.urls() : () => Promise.resolve([])),
    fetchReport: fetchCountsReport,
    onPeerDropped: (url, reason) => opts.logger.warn(`ScalingPeerDropped: ${url} did not answer (${reason}); its calls no longer count`, { reason: 'ScalingPeerDropped' }),
  });
  const scale = new ScaleSubresource(json);
  const autoscaler = new KubeAutoscaler({
    caches: opts.caches,
    gather: () => gatherer.gather(),
    write: (ns, name, replicas, rv) => scale.set(ns, name, replicas, rv),
    maxReplicas: opts.settings.limits.maxReplicas,
    metrics: createMetrics(opts.registry),
    logger: opts.logger,
    ...(opts.tickMs !== undefined ? { tickMs: opts.tickMs } : {}),
  });
  autoscaler.start();
  return autoscaler;
}

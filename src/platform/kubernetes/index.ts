// The public surface of the Kubernetes controller for the composition root (`sless controller`) and the
// KubernetesPlatform: start the reconcilers, request syncs, and the few pure helpers both sides share.
export { Controller, startController, type ControllerOptions, type StartedController } from './controller.ts';
export { createControllerMetrics, type ControllerMetrics } from './controller-metrics.ts';
export { ensureContext, type ContextInput } from './build-context.ts';
export { buildKey, imageRepository } from './objects/build-key.ts';
export { serviceBaseUrl, SERVICE_PORT } from './objects/function-workload.ts';
export { ANNOTATIONS, API_VERSION, FIELD_MANAGER, FINALIZER, GROUP, LABELS } from './objects/meta.ts';
export { cronTriggerName, functionJobName, httpTriggerName } from './objects/repository-objects.ts';
export type { FunctionJobResource, FunctionResource, RepositoryResource, TriggerResource } from './objects/resources.ts';
export { functionUrl, httpEnabled } from './reconcilers/function-reconciler.ts';
export type { Caches, ControllerLogger } from './reconcilers/reconcile-context.ts';
export { KubeClient } from './api-client/kube-client.ts';
export type { ControllerSettings, S3Settings } from './settings.ts';

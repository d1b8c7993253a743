// The shapes of the four sless kinds as the reconcilers use them (CONTRACT.md §2).
import type { Runtime } from '../../../manifest/types.ts';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface Metadata {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string | Date;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
  creationTimestamp?: string | Date;
}

export interface Resource<Spec, Status> {
  apiVersion?: string;
  kind?: string;
  metadata?: Metadata;
  spec?: Spec;
  status?: Status;
}

export interface FunctionSpec {
  runtime: Runtime;
  entrypoint?: string;
  memoryMB?: number;
  timeoutSec?: number;
  env?: Record<string, string>;
  envFromSecrets?: string[];
  codeHash?: string;
  s3Bucket?: string;
  s3Key?: string;
  source?: { repository: string; path: string; revision: string };
}
export interface FunctionStatus {
  phase?: 'Pending' | 'Building' | 'Ready' | 'Failed';
  imageRef?: string;
  message?: string;
  lastBuiltAt?: string;
  url?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}
export type FunctionResource = Resource<FunctionSpec, FunctionStatus>;

export interface TriggerSpec {
  type: 'http' | 'cron';
  functionRef: string;
  schedule?: string;
  timezone?: string;
  eventJSON?: string;
  enabled?: boolean;
}
export interface TriggerStatus {
  active?: boolean;
  url?: string;
  lastScheduleTime?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}
export type TriggerResource = Resource<TriggerSpec, TriggerStatus>;

export interface FunctionJobSpec {
  functionRef: string;
  eventJSON?: string;
  runID?: number;
}
export interface FunctionJobStatus {
  /** The runID this status describes. */
  runID?: number;
  phase?: 'Pending' | 'Skipped' | 'Running' | 'Succeeded' | 'Failed';
  jobName?: string;
  startTime?: string;
  completionTime?: string;
  message?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}
export type FunctionJobResource = Resource<FunctionJobSpec, FunctionJobStatus>;

export interface RepositorySpec {
  url: string;
  branch?: string;
  path?: string;
  interval?: string;
  secretRef?: { name: string };
  suspend?: boolean;
  prune?: boolean;
}
export interface RepositoryStatus {
  revision?: string;
  lastSyncTime?: string;
  webhookPath?: string;
  functions?: Array<{ name: string; path: string; codeHash?: string; error?: string }>;
  observedGeneration?: number;
  conditions?: Condition[];
}
export type RepositoryResource = Resource<RepositorySpec, RepositoryStatus>;

export const KINDS = {
  FunctionRepository: { kind: 'FunctionRepository', plural: 'functionrepositories' },
  Function: { kind: 'Function', plural: 'functions' },
  Trigger: { kind: 'Trigger', plural: 'triggers' },
  FunctionJob: { kind: 'FunctionJob', plural: 'functionjobs' },
} as const;
export type SlessKind = keyof typeof KINDS;

// The four sless kinds as the reconcilers and builders handle them: the generated spec/status types of
// crd-types.ts (one source of truth, generated from crds/), wrapped in a lenient object shape (everything
// optional), because informers hand over whatever the API server stored and builders take partial inputs.
import type * as crd from '../crd-types.ts';

export type {
  Condition,
  FunctionJobSpec,
  FunctionJobStatus,
  FunctionSpec,
  FunctionStatus,
  TriggerSpec,
  TriggerStatus,
} from '../crd-types.ts';
export { KINDS, type SlessKind } from '../crd-types.ts';

export type RepositorySpec = crd.FunctionRepositorySpec;
export type RepositoryStatus = crd.FunctionRepositoryStatus;
export type Metadata = crd.ObjectMeta;

export interface Resource<Spec, Status> {
  apiVersion?: string;
  kind?: string;
  metadata?: Metadata;
  spec?: Spec;
  status?: Status;
}

export type FunctionResource = Resource<crd.FunctionSpec, crd.FunctionStatus>;
export type TriggerResource = Resource<crd.TriggerSpec, crd.TriggerStatus>;
export type FunctionJobResource = Resource<crd.FunctionJobSpec, crd.FunctionJobStatus>;
export type RepositoryResource = Resource<crd.FunctionRepositorySpec, crd.FunctionRepositoryStatus>;

// Pull-request previews on every controller replica, read from the serving watches (serving-cache.ts):
// where /fn sends a call at `/fn/<namespace>-pr-<N>/<name>` (no API request per call), and the open
// previews /v1 and the console list. The leader's controller writes them into its repositories'
// status.previews; the preview's built functions are ordinary Functions in the preview namespace.
import { parsePreviewNamespace } from '../../preview/preview-name.ts';
import { routePreview } from '../../preview/preview-route.ts';
import { previewTarget, type PreviewTarget } from '../preview-target.ts';
import type { FunctionPhase, PreviewRecord } from '../types.ts';
import type { FunctionResource, RepositoryResource } from './objects/resources.ts';
import { previewEntryFor, previewRecords } from './preview-status.ts';
import { PREVIEW_LABELS } from './previews/preview-objects.ts';
import type { ServingCache } from './serving-cache.ts';
import type { SlessObjects } from './sless-objects.ts';

export class KubePreviewServing {
  constructor(
    private readonly serving: ServingCache,
    /** Reads for list() until the watches have listed. */
    private readonly objects: SlessObjects,
    private readonly publicBaseUrl: string | undefined,
  ) {}

  /**
   * Where a /fn call to `namespace` goes when it is an open preview's (src/preview/preview-route.ts);
   * undefined for any other namespace, and until the watches have listed.
   */
  target(namespace: string, name: string): PreviewTarget | undefined {
    const parsed = parsePreviewNamespace(namespace);
    if (!parsed || !this.serving.synced) return undefined;
    const preview = previewEntryFor(this.serving.repositories.list(parsed.namespace), namespace);
    const own = this.serving.functions.get(name, namespace);
    const ownFunction = own !== undefined && !own.metadata?.deletionTimestamp;
    const previewBuilt = own?.metadata?.labels?.[PREVIEW_LABELS.of] === parsed.namespace;
    return previewTarget(routePreview({ preview, name, ownFunction, previewBuilt }), namespace, parsed.namespace);
  }

  /** The namespace whose function a call at (namespace, name) counts for and wakes: production's for a function the PR leaves alone. */
  servedBy(namespace: string, name: string): string {
    const t = this.target(namespace, name);
    return t && 'namespace' in t ? t.namespace : namespace;
  }

  async list(namespace: string): Promise<PreviewRecord[]> {
    if (this.serving.synced) {
      const { functions } = this.serving;
      return previewRecords({
        repositories: this.serving.repositories.list(namespace),
        phaseOf: (ns, name) => functions.get(name, ns)?.status?.phase,
        publicBaseUrl: this.publicBaseUrl,
      });
    }
    const repositories = await this.objects.list<RepositoryResource>('FunctionRepository', namespace);
    const previewNamespaces = new Set(previewRecords({ repositories, phaseOf: () => undefined, publicBaseUrl: undefined }).map((p) => p.namespace));
    const phases = new Map<string, FunctionPhase | undefined>();
    for (const ns of previewNamespaces) {
      for (const f of await this.objects.list<FunctionResource>('Function', ns)) phases.set(`${ns}/${f.metadata?.name ?? ''}`, f.status?.phase);
    }
    return previewRecords({ repositories, phaseOf: (ns, name) => phases.get(`${ns}/${name}`), publicBaseUrl: this.publicBaseUrl });
  }
}

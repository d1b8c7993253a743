// The preview route (src/preview/preview-route.ts) as /fn and the scaler of both platforms use it: the
// namespace whose function answers, or the answer itself.
import type { PreviewRoute } from '../preview/preview-route.ts';
import type { Endpoint } from './types.ts';

/** Where a /fn call to a preview namespace goes; undefined: no open preview there (served as any namespace). */
export type PreviewTarget = { readonly namespace: string } | { readonly endpoint: Endpoint };

export function previewTarget(route: PreviewRoute, previewNamespace: string, baseNamespace: string): PreviewTarget | undefined {
  switch (route.kind) {
    case 'not-a-preview':
      return undefined;
    case 'preview':
      return { namespace: previewNamespace };
    case 'production':
      return { namespace: baseNamespace };
    case 'not-found':
      return { endpoint: { kind: 'not-found' } };
    case 'not-ready':
      return { endpoint: { kind: 'not-ready', reason: route.reason } };
  }
}

// The namespace of a pull request's preview: `<namespace>-pr-<N>`, a DNS label like every namespace.
// Pure. A name that would be too long, or that an existing namespace of something else already
// holds, is refused (the caller says so in a commit status), never shortened or suffixed: the
// preview URL must be guessable from the PR number.

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const PREVIEW_SUFFIX = /^(.+)-pr-([1-9][0-9]*)$/;

export function previewNamespace(namespace: string, number: number): string {
  return `${namespace}-pr-${number}`;
}

/** The base namespace and PR number of a preview namespace's name, or undefined for any other name. */
export function parsePreviewNamespace(name: string): { namespace: string; number: number } | undefined {
  const m = PREVIEW_SUFFIX.exec(name);
  return m ? { namespace: m[1] as string, number: Number(m[2]) } : undefined;
}

export interface NamespaceCheck {
  /** Whether a namespace of that name exists that is not this repository's preview of that PR. */
  readonly takenByOther: (name: string) => boolean;
}

export function checkPreviewNamespace(namespace: string, number: number, check: NamespaceCheck): { name: string } | { error: string } {
  const name = previewNamespace(namespace, number);
  if (name.length > 63 || !DNS_LABEL.test(name)) {
    return { error: `the preview namespace ${name} would be longer than 63 characters (a DNS label); no preview for this pull request` };
  }
  if (check.takenByOther(name)) return { error: `namespace ${name} exists and is not this repository's preview; no preview for this pull request` };
  return { name };
}

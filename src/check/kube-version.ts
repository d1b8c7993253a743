// The oldest Kubernetes sless installs on: the ValidatingAdmissionPolicy (deploy/rbac.yaml) is GA in
// admissionregistration.k8s.io/v1 from 1.30.

export const MIN_KUBERNETES = { major: 1, minor: 30 } as const;

/** `/version`'s major and minor (`"1"`, `"30+"` on some distributions) -> numbers, or undefined. */
export function parseKubeVersion(v: { major?: string; minor?: string; gitVersion?: string }): { major: number; minor: number } | undefined {
  const major = Number.parseInt(v.major ?? '', 10);
  const minor = Number.parseInt(v.minor ?? '', 10);
  if (Number.isFinite(major) && Number.isFinite(minor)) return { major, minor };
  const m = /^v?(\d+)\.(\d+)/.exec(v.gitVersion ?? '');
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

export function kubeVersionSupported(v: { major: number; minor: number }): boolean {
  return v.major > MIN_KUBERNETES.major || (v.major === MIN_KUBERNETES.major && v.minor >= MIN_KUBERNETES.minor);
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** True for an RFC 1123 label (what Kubernetes accepts as a namespace or Service name). */
export function isDnsLabel(value: string): boolean {
  return DNS_LABEL.test(value);
}

// Name patterns and the checked-string helper shared by the function.yaml schema and its queue entries.
import { z } from 'zod';

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A string that `check` accepts; `check` returns why not, in a user's words. */
export const checkedString = (check: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const why = check(value);
    if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
  });

/** A DNS-1123 label of at most 63 characters, `what` naming it in the message. */
export const dnsLabel = (what: string) =>
  checkedString((v) =>
    v.length > 63 || !DNS_LABEL.test(v)
      ? `${what} "${v}" is not a DNS-1123 label (lowercase letters, digits and "-", at most 63 characters)`
      : undefined,
  );

/** A Kubernetes Secret name. */
export const secretName = () =>
  z
    .string()
    .max(253)
    .regex(DNS_SUBDOMAIN, 'must be a Secret name: lowercase letters, digits, "-" and "."');

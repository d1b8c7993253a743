// `FunctionRepository.spec.previews` (and `sless dev --previews`): the one place its defaults live.

export type PreviewSecrets = 'none' | 'inherit';

export interface PreviewSettings {
  readonly enabled: boolean;
  /** A preview is removed this long after its last push. */
  readonly ttlMs: number;
  /** Open previews per repository; the next pull request is refused with a commit status. */
  readonly maxOpen: number;
  /** Schedules and jobs run in previews only when true (a preview must not fire production side effects). */
  readonly schedules: boolean;
  /** `inherit`: previews get the Secrets of env_from_secrets; `none`: they do not. */
  readonly secrets: PreviewSecrets;
}

export const PREVIEW_DEFAULTS = { enabled: false, ttl: '72h', maxOpen: 5, schedules: false, secrets: 'none' } as const;

/** The spec as written (every field optional), e.g. a FunctionRepository's `spec.previews`. */
export interface PreviewSpec {
  readonly enabled?: boolean;
  readonly ttl?: string;
  readonly maxOpen?: number;
  readonly schedules?: boolean;
  readonly secrets?: PreviewSecrets;
}

/** Fills in the defaults; a ttl that is not a duration is an error naming the field. */
export function previewSettingsOf(spec: PreviewSpec | undefined, where = 'spec.previews'): PreviewSettings | { error: string } {
  const ttl = spec?.ttl ?? PREVIEW_DEFAULTS.ttl;
  const ttlMs = ttlToMs(ttl);
  if (ttlMs === undefined || ttlMs <= 0) return { error: `${where}.ttl: "${ttl}" is not a duration like 72h, 30m or 1d` };
  const maxOpen = spec?.maxOpen ?? PREVIEW_DEFAULTS.maxOpen;
  if (!Number.isInteger(maxOpen) || maxOpen < 0) return { error: `${where}.maxOpen: ${maxOpen} is not a whole number ≥ 0` };
  return {
    enabled: spec?.enabled ?? PREVIEW_DEFAULTS.enabled,
    ttlMs,
    maxOpen,
    schedules: spec?.schedules ?? PREVIEW_DEFAULTS.schedules,
    secrets: spec?.secrets ?? PREVIEW_DEFAULTS.secrets,
  };
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `72h`, `30m`, `2d`, `90s` → milliseconds; anything else → undefined. */
export function ttlToMs(text: string): number | undefined {
  const m = /^(\d{1,6})(s|m|h|d)$/.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

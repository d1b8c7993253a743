// JSON schemas of /v1 (docs/contract.md §3): snake_case, strict inputs (additionalProperties: false),
// and output schemas that fastify also uses to serialize, so nothing undeclared (like credentials)
// can ever leak into a response. The same objects feed /v1/openapi.json.
import { QUEUE_DEFAULTS } from '../manifest/defaults.ts';
import { RUNTIMES } from '../manifest/types.ts';

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const label = (maxLength: number) => ({ type: 'string', pattern: DNS_LABEL, maxLength }) as const;
const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const int = { type: 'integer' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const managedBy = { type: 'string', description: '"api", or "git:<repository>" for functions a FunctionRepository owns' } as const;

export const errorSchema = {
  type: 'object',
  required: ['error', 'code'],
  properties: { error: str, code: str },
} as const;

const functionFields = {
  runtime: { type: 'string', enum: [...RUNTIMES] },
  entrypoint: { type: 'string', minLength: 1, maxLength: 253 },
  memory_mb: { type: 'integer', minimum: 64, maximum: 8192 },
  timeout_sec: { type: 'integer', minimum: 1, maximum: 900 },
  env_vars: {
    type: 'object',
    description: 'plain environment variables; a value may not hold a NUL byte',
    propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    additionalProperties: str,
  },
  env_from_secrets: { type: 'array', items: label(253), maxItems: 64 },
  http_enabled: bool,
  scale: {
    type: 'object',
    additionalProperties: false,
    description: 'replicas: min (0 scales to zero when idle), max (at most SLESS_MAX_REPLICAS), concurrency (target requests in flight per replica), idle (e.g. "5m", at least 10s). A PUT without scale keeps it; with scale, fields left out return to their defaults.',
    properties: {
      min: { type: 'integer', minimum: 0, maximum: 1000 },
      max: { type: 'integer', minimum: 1, maximum: 1000 },
      concurrency: { type: 'integer', minimum: 1, maximum: 10000 },
      idle: { type: 'string', pattern: '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$', minLength: 2, maxLength: 16 },
    },
  },
} as const;

export const functionCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'runtime'],
  properties: { name: label(53), ...functionFields },
} as const;

/** PUT changes only the fields it carries (a PUT without runtime keeps the current one). */
export const functionUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { name: label(53), ...functionFields },
} as const;

export const functionSchema = {
  type: 'object',
  properties: {
    name: str,
    namespace: str,
    runtime: str,
    entrypoint: str,
    memory_mb: int,
    timeout_sec: int,
    env_vars: { type: 'object', additionalProperties: str },
    env_from_secrets: { type: 'array', items: str },
    http_enabled: bool,
    scale: {
      type: 'object',
      description: 'the scale in effect, defaults filled in (idle as written)',
      properties: { min: int, max: int, concurrency: int, idle: str },
    },
    replicas: {
      type: 'object',
      description: 'replicas wanted (desired) and serving (ready); 0 and 0 while idle at zero',
      properties: { desired: int, ready: int },
    },
    phase: { type: 'string', enum: ['Pending', 'Building', 'Ready', 'Failed'] },
    image_ref: str,
    message: str,
    code_hash: str,
    last_built_at: time,
    url: str,
    managed_by: managedBy,
    pinned: {
      type: ['object', 'null'],
      description: 'set while a rollback pins the function to an earlier revision (docs/rollback.md); null: its own spec serves',
      properties: { revision: int, since: time },
    },
  },
} as const;

const queueName = { type: 'string', minLength: 1, maxLength: 235 } as const;

/** A queue trigger's settings (the fields of function.yaml `queues:`; docs/queues.md). */
const queueSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'queue'],
  description: 'type queue only: the RabbitMQ queue consumed, one call of the function per message (docs/queues.md)',
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'amqp://host:5672/vhost or amqps://...; refused when it carries credentials' },
    secret: { ...label(253), description: 'a Secret in the namespace with the keys username and password' },
    queue: { ...queueName, description: 'the queue consumed; it must exist unless declare is true' },
    declare: { type: 'boolean', description: `true: sless declares the queue and its dead-letter queue (default ${String(QUEUE_DEFAULTS.declare)})` },
    prefetch: { type: 'integer', minimum: 1, maximum: QUEUE_DEFAULTS.maxPrefetch, description: `messages in flight per consumer (default ${QUEUE_DEFAULTS.prefetch})` },
    retries: { type: 'integer', minimum: 0, maximum: QUEUE_DEFAULTS.maxRetries, description: `calls after the first before dead-lettering (default ${QUEUE_DEFAULTS.retries})` },
    dead_letter: { ...queueName, description: `where failed messages go (default <queue>${QUEUE_DEFAULTS.deadLetterSuffix})` },
  },
} as const;

export const triggerCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'function_ref'],
  properties: {
    name: label(63),
    type: { type: 'string', enum: ['http', 'cron', 'queue'] },
    function_ref: label(53),
    schedule: { type: 'string', minLength: 1, maxLength: 100 },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
    event_json: { type: 'string', description: 'JSON text handed to the handler as its event (nested at most 64 levels)' },
    queue: queueSettingsSchema,
    enabled: bool,
  },
} as const;

export const triggerPatchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  properties: { enabled: bool },
} as const;

export const triggerSchema = {
  type: 'object',
  properties: {
    name: str,
    type: str,
    function_ref: str,
    schedule: str,
    timezone: str,
    event_json: str,
    enabled: bool,
    active: bool,
    url: str,
    last_schedule_time: time,
    queue: {
      type: 'object',
      properties: { url: str, secret: str, queue: str, declare: bool, prefetch: int, retries: int, dead_letter: str },
    },
    lag: { type: 'integer', description: 'type queue: ready messages in the queue at the last reading' },
    in_flight: { type: 'integer', description: 'type queue: messages handed to the function and not yet settled' },
    dead_lettered: { type: 'integer', description: 'type queue: messages in the dead-letter queue at the last reading' },
    managed_by: managedBy,
  },
} as const;

export const jobCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'function_ref'],
  properties: {
    name: label(63),
    function_ref: label(53),
    event_json: {
      description: 'the event: JSON text, or any JSON value (then serialized); nested at most 64 levels',
      type: ['string', 'object', 'array', 'number', 'boolean', 'null'],
    },
    run_id: { type: 'integer', minimum: 0 },
  },
} as const;

export const jobSchema = {
  type: 'object',
  properties: {
    name: str,
    function_ref: str,
    event_json: str,
    run_id: int,
    phase: { type: 'string', enum: ['Pending', 'Skipped', 'Running', 'Succeeded', 'Failed'] },
    job_name: str,
    start_time: time,
    completion_time: time,
    message: str,
    managed_by: managedBy,
  },
} as const;

export const repositoryCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url'],
  properties: {
    name: label(63),
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    branch: { type: 'string', minLength: 1, maxLength: 255 },
    path: { type: 'string', maxLength: 1024 },
    interval: { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$', description: 'Go duration, e.g. 1m or 30s' },
    suspend: bool,
    prune: bool,
    credentials: {
      type: 'object',
      additionalProperties: false,
      description: 'stored in a Secret; never returned',
      properties: { username: str, password: str, token: str },
    },
    webhook_secret: { type: 'string', minLength: 1, description: 'stored in a Secret; never returned' },
  },
} as const;

export const repositorySchema = {
  type: 'object',
  properties: {
    name: str,
    namespace: str,
    url: str,
    branch: str,
    path: str,
    interval: str,
    suspend: bool,
    prune: bool,
    secret_name: str,
    revision: str,
    last_sync_time: time,
    webhook_path: str,
    functions: {
      type: 'array',
      items: { type: 'object', properties: { name: str, path: str, code_hash: str, error: str } },
    },
    ready: { type: 'object', properties: { status: str, reason: str, message: str } },
  },
} as const;

export const sourceSchema = {
  type: 'object',
  required: ['files'],
  properties: {
    files: {
      type: 'array',
      description: 'every file of the function, sorted by path',
      items: {
        type: 'object',
        required: ['path', 'content', 'encoding', 'mode'],
        properties: {
          path: { type: 'string', description: 'relative to the function folder, "/" separated' },
          content: { type: 'string', description: 'the text itself (utf-8), or base64 for bytes that are not UTF-8 text' },
          encoding: { type: 'string', enum: ['utf-8', 'base64'] },
          mode: { type: 'string', enum: ['100644', '100755', '120000'], description: 'regular, executable, symlink (content = target)' },
        },
      },
    },
  },
} as const;

export const invocationSchema = {
  type: 'object',
  properties: {
    method: str,
    path: str,
    status: int,
    duration_ms: { type: 'number' },
    request_bytes: int,
    response_bytes: int,
    started_at: time,
    cold_start_ms: { type: 'number', description: 'present when the call waited for its function to start from zero: how long (part of duration_ms)' },
  },
} as const;

export const buildSchema = {
  type: 'object',
  properties: {
    code_hash: str,
    outcome: { type: 'string', enum: ['started', 'succeeded', 'failed'] },
    image_ref: str,
    message: str,
    started_at: time,
    finished_at: time,
    duration_ms: { type: 'number' },
  },
} as const;

export const limitQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: '1..1000, default 100' } },
} as const;

export const namespaceResultSchema = { type: 'object', properties: { namespace: str } } as const;
export const statusResultSchema = { type: 'object', properties: { status: str } } as const;

export const arrayOf = (items: object) => ({ type: 'array', items }) as const;

// ArtifactStore on any S3-compatible server (AWS, SeaweedFS, MinIO, Ceph RGW). Uploads stream bodies
// of unknown length through @aws-sdk/lib-storage: one PutObject when the body fits in a part,
// multipart otherwise (aborted on failure), always with a known Content-Length per request, so
// SigV4 payload signing works over plain http and no chunk framing reaches the stored object.
// For non-AWS endpoints the SDK's checksum behaviour is `WHEN_REQUIRED`: Ceph and older
// S3-compatible stores reject the trailing checksums the SDK sends by default.
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  ArtifactStoreError,
  checkArtifactKey,
  checkArtifactPrefix,
  type ArtifactStore,
  type ArtifactStoreErrorKind,
  type PutOptions,
} from './artifact-store.ts';
import { compareCodeUnits } from './relative-paths.ts';

export interface S3ArtifactStoreOptions {
  readonly bucket: string;
  /** `http(s)://host:port`; absent for AWS itself. */
  readonly endpoint?: string;
  /** Default `us-east-1`. */
  readonly region?: string;
  /** Absent: the SDK's default chain (env, profile, IRSA, instance metadata). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
  /** Path-style URLs (`endpoint/bucket/key`); default true when an endpoint is given. */
  readonly forcePathStyle?: boolean;
  /** Default `WHEN_REQUIRED` when an endpoint is given, else the SDK's `WHEN_SUPPORTED`. */
  readonly checksums?: 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';
  /** Create the bucket in init() when it is missing; default false (then init() says it is missing). */
  readonly createBucket?: boolean;
  /** Attempts per request including the first (SDK standard retry with backoff); default 3. */
  readonly maxAttempts?: number;
  /** Milliseconds to establish a TCP connection; default 3000. */
  readonly connectTimeoutMs?: number;
  /** Milliseconds a socket may sit idle mid-request before the attempt fails; default 30000. */
  readonly idleTimeoutMs?: number;
  /** Multipart part size in bytes (>= 5 MiB); default 8 MiB. Memory use is about 2 parts. */
  readonly partSize?: number;
}

const MiB = 1024 * 1024;

export class S3ArtifactStore implements ArtifactStore {
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly createBucket: boolean;
  private readonly partSize: number;

  constructor(options: S3ArtifactStoreOptions) {
    this.bucket = options.bucket;
    this.createBucket = options.createBucket ?? false;
    this.partSize = Math.max(options.partSize ?? 8 * MiB, 5 * MiB);
    const endpoint = options.endpoint === undefined ? undefined : withoutUserInfo(options.endpoint);
    this.location = `s3://${this.bucket} at ${endpoint ?? 'AWS'}`;
    const checksums = options.checksums ?? (endpoint === undefined ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED');
    this.client = new S3Client({
      ...(endpoint === undefined ? {} : { endpoint }),
      region: options.region ?? 'us-east-1',
      ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } }),
      forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
      requestChecksumCalculation: checksums,
      responseChecksumValidation: checksums,
      maxAttempts: options.maxAttempts ?? 3,
      requestHandler: {
        connectionTimeout: options.connectTimeoutMs ?? 3000,
        socketTimeout: options.idleTimeoutMs ?? 30_000,
      },
    });
  }

  async init(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (err) {
      if (errorKind(err) !== 'NotFound') throw this.fail(err, 'check the bucket');
    }
    if (!this.createBucket) {
      throw new ArtifactStoreError(
        'Invalid',
        `the bucket for ${this.location} does not exist; create it, or let sless create it at start`,
      );
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const name = (err as Error).name;
      // Another replica may have created it in between.
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw this.fail(err, 'create the bucket');
    }
  }

  async has(key: string): Promise<boolean> {
    this.check(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if (errorKind(err) === 'NotFound' && !isNoSuchBucket(err)) return false;
      throw this.fail(err, 'check', key);
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<void> {
    this.check(key);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: options.contentType ?? 'application/octet-stream',
      },
      partSize: this.partSize,
      queueSize: 2,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      body.destroy();
      throw this.fail(err, 'upload', key);
    }
  }

  /** A presigned GET (SigV4 query string): signing is local, the store is not asked. At most 7 days (S3's limit). */
  async readUrl(key: string, expiresInSec: number): Promise<string> {
    this.check(key);
    const expiresIn = Math.min(Math.max(Math.ceil(expiresInSec), 1), 7 * 24 * 3600);
    try {
      return await getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn });
    } catch (err) {
      throw this.fail(err, 'sign a read URL for', key);
    }
  }

  async get(key: string): Promise<Readable> {
    this.check(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!(out.Body instanceof Readable)) {
        throw new Error('the SDK returned a body that is not a Node.js stream');
      }
      return out.Body;
    } catch (err) {
      throw this.fail(err, 'read', key);
    }
  }

  async delete(key: string): Promise<void> {
    this.check(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (errorKind(err) === 'NotFound' && !isNoSuchBucket(err)) return;
      throw this.fail(err, 'delete', key);
    }
  }

  async list(prefix: string): Promise<string[]> {
    checkArtifactPrefix(prefix, this.location);
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw this.fail(err, 'list', `${prefix}*`);
    }
    return keys.sort(compareCodeUnits);
  }

  /** Closes idle connections; the store must not be used afterwards. */
  close(): void {
    this.client.destroy();
  }

  private check(key: string): void {
    checkArtifactKey(key, this.location);
  }

  private fail(err: unknown, action: string, key?: string): ArtifactStoreError {
    if (err instanceof ArtifactStoreError) return err;
    const kind = errorKind(err);
    const what = key === undefined ? this.location : `"${key}" in ${this.location}`;
    const hint: Record<ArtifactStoreErrorKind, string> = {
      NotFound: isNoSuchBucket(err) ? 'the bucket does not exist' : 'no such key',
      Unavailable: 'the S3 server is unreachable or failing; try again later',
      Denied: 'access denied: check the S3 access key, secret key and the bucket policy',
      Invalid: 'the request was rejected',
    };
    return new ArtifactStoreError(kind, `cannot ${action} ${what}: ${hint[kind]} (${describe(err)})`, { cause: err });
  }
}

/** Sorts an SDK or network error into the store's error kinds. */
function errorKind(err: unknown): ArtifactStoreErrorKind {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  const name = e.name ?? '';
  if (status === 404 || ['NoSuchKey', 'NotFound', 'NoSuchBucket'].includes(name)) return 'NotFound';
  if (status === 401 || status === 403 ||
    ['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'Forbidden'].includes(name)) return 'Denied';
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) return 'Invalid';
  // 5xx, 408, 429, throttling, connection refused/reset, DNS failures, timeouts.
  return 'Unavailable';
}

function isNoSuchBucket(err: unknown): boolean {
  return (err as { name?: string }).name === 'NoSuchBucket';
}

/** Error name, HTTP status or network code: never the request, which may carry signed headers. */
function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const parts = [e.name, e.code, e.$metadata?.httpStatusCode?.toString()].filter(
    (p): p is string => p !== undefined && p !== '' && p !== 'Error',
  );
  const unique = [...new Set(parts)];
  return unique.length > 0 ? unique.join(' ') : (e.message ?? String(err));
}

/** `http://user:pass@host:9000/` → `http://host:9000`; credentials belong in `credentials`. */
function withoutUserInfo(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch (err) {
    throw new ArtifactStoreError('Invalid', `S3 endpoint "${endpoint.replace(/\/\/[^@/]*@/, '//')}" is not a URL like http://host:9000`, {
      cause: err,
    });
  }
  url.username = '';
  url.password = '';
  return url.href.replace(/\/$/, '');
}

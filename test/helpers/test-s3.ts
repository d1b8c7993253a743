// The S3 server of the test run (service `s3`: test/services/s3.ts writes SLESS_TEST_S3_*), in the two
// shapes the kits need: an S3Access for a controller in this process, and the SLESS_S3_* / AWS_* settings
// of a `sless controller` child process.

export interface S3Access {
  readonly endpoint: string;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  readonly bucket: string;
}

export function sharedS3(): S3Access {
  const e = process.env;
  if (!e.SLESS_TEST_S3_ENDPOINT || !e.SLESS_TEST_S3_ACCESS_KEY || !e.SLESS_TEST_S3_SECRET_KEY || !e.SLESS_TEST_S3_BUCKET) {
    throw new Error('SLESS_TEST_S3_* are not set: run this suite through `npm test` or `npm run test:node` (they start the s3 service)');
  }
  return {
    endpoint: e.SLESS_TEST_S3_ENDPOINT,
    accessKey: e.SLESS_TEST_S3_ACCESS_KEY,
    secretKey: e.SLESS_TEST_S3_SECRET_KEY,
    region: e.SLESS_TEST_S3_REGION ?? 'us-east-1',
    bucket: e.SLESS_TEST_S3_BUCKET,
  };
}

/** The settings that point a `sless controller` process at `s3` (default the test run's). */
export function s3ControllerEnv(s3: S3Access = sharedS3()): Record<string, string> {
  return {
    SLESS_S3_ENDPOINT: s3.endpoint,
    SLESS_S3_BUCKET: s3.bucket,
    SLESS_S3_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKey,
    AWS_SECRET_ACCESS_KEY: s3.secretKey,
  };
}

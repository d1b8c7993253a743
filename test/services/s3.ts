// Test service `s3`: one real S3-compatible server (SeaweedFS `weed mini`, see
// test/helpers/s3-server.ts) for the whole test run, with a configured identity so signatures are
// checked. Tests that need to take S3 down start their own server with startS3Server().
import type { TestService } from '../run.ts';
import { testBindHost } from '../helpers/bind-host.ts';
import { startS3Server } from '../helpers/s3-server.ts';

export const service: TestService = {
  name: 's3',
  async start() {
    const server = await startS3Server({ host: testBindHost() });
    return {
      env: {
        SLESS_TEST_S3_ENDPOINT: server.endpoint,
        SLESS_TEST_S3_ACCESS_KEY: server.accessKey,
        SLESS_TEST_S3_SECRET_KEY: server.secretKey,
        SLESS_TEST_S3_REGION: server.region,
        SLESS_TEST_S3_BUCKET: server.bucket,
      },
      stop: () => server.dispose(),
    };
  },
};

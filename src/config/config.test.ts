import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, describeSettings, loadControllerConfig, loadDevConfig, loadValidateSettings } from './config.ts';

const SECRET = 'a-secret-of-at-least-32-bytes-0123456789';
const controllerEnv = { SLESS_JWT_SECRET: SECRET, SLESS_S3_BUCKET: 'contexts', SLESS_REGISTRY: 'reg.example/sless' };

describe('settings', () => {
  it('takes a flag over its SLESS_* variable over the default', () => {
    assert.equal(loadDevConfig([], {}).port, 8080);
    assert.equal(loadDevConfig([], { SLESS_PORT: '9000' }).port, 9000);
    assert.equal(loadDevConfig(['--port', '9100'], { SLESS_PORT: '9000' }).port, 9100);
  });

  it('gives sless dev working defaults with nothing set', () => {
    const c = loadDevConfig([], {});
    assert.equal(c.namespace, 'dev');
    assert.equal(c.repoName, 'local');
    assert.equal(c.dataDir, '.sless');
    assert.equal(c.pollInterval, 10_000);
    assert.equal(c.jwtSecret, undefined);
  });

  it('stops the start with a message that names the bad setting', () => {
    assert.throws(() => loadDevConfig(['--port', 'eighty'], {}), (e: unknown) => e instanceof ConfigError && /--port \/ SLESS_PORT/.test(e.message));
    assert.throws(() => loadDevConfig(['--namespace', 'Not_A_Label'], {}), /--namespace \/ SLESS_NAMESPACE.*DNS-1123/);
    assert.throws(() => loadDevConfig(['--poll-interval', 'soon'], {}), /a duration like/);
    assert.throws(() => loadDevConfig(['--no-such-flag'], {}), /known flags/);
  });

  it('drops a --path given before a later --repo (npm start -- --repo X watches X, not X/examples)', () => {
    const npmStart = ['--repo', '.', '--path', 'examples', '--exit-with-parent'];
    assert.deepEqual(pick(loadDevConfig([...npmStart], {})), { repo: '.', path: 'examples' });
    assert.deepEqual(pick(loadDevConfig([...npmStart, '--repo', '/x'], {})), { repo: '/x', path: '' });
    assert.deepEqual(pick(loadDevConfig([...npmStart, '--repo=/x', '--path', 'fns'], {})), { repo: '/x', path: 'fns' });
    assert.deepEqual(pick(loadDevConfig([...npmStart, '--path', 'other'], {})), { repo: '.', path: 'other' });
    assert.deepEqual(pick(loadDevConfig(['--path=fns', '--repo', '/x'], {})), { repo: '/x', path: 'fns' }, 'one --repo: --path counts wherever it stands');
  });

  it('parses durations', () => {
    assert.equal(loadDevConfig(['--poll-interval', '2s'], {}).pollInterval, 2000);
    assert.equal(loadDevConfig(['--poll-interval', '1m'], {}).pollInterval, 60_000);
  });

  it('requires the controller to know how to verify tokens, where to store contexts and push images', () => {
    assert.throws(() => loadControllerConfig([], { ...controllerEnv, SLESS_JWT_SECRET: undefined }), /no way to verify \/v1 tokens/);
    assert.throws(() => loadControllerConfig([], { ...controllerEnv, SLESS_REGISTRY: undefined }), /missing setting SLESS_REGISTRY/);
    assert.throws(() => loadControllerConfig([], { ...controllerEnv, SLESS_S3_BUCKET: undefined }), /missing setting SLESS_S3_BUCKET/);
    assert.throws(
      () => loadControllerConfig([], { ...controllerEnv, SLESS_JWKS_URL: 'https://idp.example/jwks' }),
      /choose one way to verify tokens/,
    );
  });

  it('defaults the runtime image prefix to the registry and the builder to the pinned kaniko fork', () => {
    const c = loadControllerConfig([], controllerEnv);
    assert.equal(c.runtimeImagePrefix, 'reg.example/sless');
    assert.match(c.kanikoImage, /^martizih\/kaniko:v/);
    assert.equal(c.buildNamespace, 'sless-builds');
    assert.ok(Object.isFrozen(c));
  });

  it('serves /metrics on a port of its own: 9090 unless SLESS_METRICS_PORT or --metrics-port says otherwise', () => {
    assert.equal(loadControllerConfig([], controllerEnv).metricsPort, 9090);
    assert.equal(loadControllerConfig([], { ...controllerEnv, SLESS_METRICS_PORT: '9100' }).metricsPort, 9100);
    assert.equal(loadControllerConfig(['--metrics-port', '0'], controllerEnv).metricsPort, 0);
    assert.throws(() => loadControllerConfig([], { ...controllerEnv, SLESS_METRICS_PORT: 'metrics' }), /SLESS_METRICS_PORT/);
  });

  it('reconciles every namespace unless SLESS_WATCH_NAMESPACE names one', () => {
    assert.equal(loadControllerConfig([], controllerEnv).watchNamespace, undefined);
    assert.equal(loadControllerConfig([], { ...controllerEnv, SLESS_WATCH_NAMESPACE: 'team-a' }).watchNamespace, 'team-a');
    assert.throws(() => loadControllerConfig([], { ...controllerEnv, SLESS_WATCH_NAMESPACE: 'Team_A' }), /SLESS_WATCH_NAMESPACE/);
  });

  it('caps schedules and jobs per function at 20 each unless SLESS_MAX_SCHEDULES_PER_FUNCTION / SLESS_MAX_JOBS_PER_FUNCTION say otherwise, alike for the controller, sless dev and sless validate', () => {
    const dev = loadDevConfig([], {});
    const controller = loadControllerConfig([], controllerEnv);
    for (const c of [dev, controller]) assert.deepEqual([c.maxSchedulesPerFunction, c.maxJobsPerFunction], [20, 20]);
    assert.deepEqual(loadValidateSettings({}), { maxReplicas: 20, schedulesPerFunction: 20, jobsPerFunction: 20 });
    const set = { SLESS_MAX_SCHEDULES_PER_FUNCTION: '50', SLESS_MAX_JOBS_PER_FUNCTION: '3' };
    assert.deepEqual([loadDevConfig([], set).maxSchedulesPerFunction, loadDevConfig([], set).maxJobsPerFunction], [50, 3]);
    assert.deepEqual([loadControllerConfig([], { ...controllerEnv, ...set }).maxSchedulesPerFunction, loadControllerConfig([], { ...controllerEnv, ...set }).maxJobsPerFunction], [50, 3]);
    assert.deepEqual(loadValidateSettings(set), { maxReplicas: 20, schedulesPerFunction: 50, jobsPerFunction: 3 });
    assert.throws(() => loadValidateSettings({ SLESS_MAX_SCHEDULES_PER_FUNCTION: '0' }), /SLESS_MAX_SCHEDULES_PER_FUNCTION/);
    assert.throws(() => loadDevConfig([], { SLESS_MAX_JOBS_PER_FUNCTION: 'many' }), /SLESS_MAX_JOBS_PER_FUNCTION/);
  });

  it('reads SLESS_CONSOLE_EXCLUDE as comma-separated names or globs, none by default', () => {
    assert.deepEqual(loadDevConfig([], {}).consoleExclude, []);
    assert.deepEqual(loadDevConfig([], { SLESS_CONSOLE_EXCLUDE: 'healthcheck, internal-*,' }).consoleExclude, ['healthcheck', 'internal-*']);
    assert.throws(() => loadDevConfig([], { SLESS_CONSOLE_EXCLUDE: 'Bad Name' }), /SLESS_CONSOLE_EXCLUDE/);
  });

  it('accepts SLESS_AUTH_INSECURE=1 as the explicit unsigned-token mode', () => {
    const c = loadControllerConfig([], { ...controllerEnv, SLESS_JWT_SECRET: undefined, SLESS_AUTH_INSECURE: '1' });
    assert.equal(c.authInsecure, true);
  });

  it('refuses a key together with insecure mode, on both commands', () => {
    for (const key of [{ SLESS_JWT_SECRET: SECRET }, { SLESS_JWKS_URL: 'https://idp.example/jwks' }, { SLESS_JWT_PUBLIC_KEY: 'PEM' }]) {
      const env = { ...controllerEnv, SLESS_JWT_SECRET: undefined, ...key, SLESS_AUTH_INSECURE: '1' };
      assert.throws(() => loadControllerConfig([], env), /SLESS_AUTH_INSECURE=1 accepts unsigned tokens, yet SLESS_\w+ is set/);
      assert.throws(() => loadDevConfig([], env), /SLESS_AUTH_INSECURE=1 accepts unsigned tokens, yet SLESS_\w+ is set/);
    }
  });

  it('refuses HS256 secrets shorter than 32 bytes', () => {
    assert.throws(() => loadDevConfig([], { SLESS_JWT_SECRET: 's3cret' }), /SLESS_JWT_SECRET.*at least 32 bytes/);
    assert.throws(() => loadControllerConfig([], { ...controllerEnv, SLESS_JWT_SECRET: 'x'.repeat(31) }), /at least 32 bytes/);
    assert.equal(loadDevConfig([], { SLESS_JWT_SECRET: 'x'.repeat(32) }).jwtSecret, 'x'.repeat(32));
  });

  it('refuses tokens without exp unless SLESS_JWT_ALLOW_NO_EXP says otherwise', () => {
    assert.equal(loadDevConfig([], {}).jwtAllowNoExp, false);
    assert.equal(loadDevConfig([], { SLESS_JWT_ALLOW_NO_EXP: '1' }).jwtAllowNoExp, true);
  });

  it('names the closest flag for a mistyped one, and --help shows defaults', () => {
    assert.throws(() => loadDevConfig(['--prot', '80'], {}), /unknown flag --prot; did you mean --port\?/);
    assert.throws(() => loadDevConfig(['--data-dri', 'x'], {}), /did you mean --data-dir\?/);
    assert.match(describeSettings('dev'), /--poll-interval .*\(default: 10000\)/);
  });
});

function pick(c: { repo: string; path: string }): { repo: string; path: string } {
  return { repo: c.repo, path: c.path };
}

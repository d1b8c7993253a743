// Where the shared test servers (services `git`, `s3`) listen: 127.0.0.1, or in a run with the real
// node (service `node`, which sets SLESS_TEST_BIND_HOST) the node's bridge address, which the host
// and the pods both reach. URLs the tests hand to the controller then work from pods too.
export function testBindHost(): string {
  return process.env.SLESS_TEST_BIND_HOST ?? '127.0.0.1';
}

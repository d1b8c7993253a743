import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startFailureText } from './start-failure.ts';

const appDir = '/data/builds/abc/app';
const place = { appDir, shownAs: 'examples/hello' };

describe('a start failure, cut down to what a user acts on', () => {
  it("keeps Node's SyntaxError line and location, drops the loader's frames, names the repository path", () => {
    const output = [
      `sless-runtime: entrypoint "handler.handle": loading ${appDir}/handler.js failed: ${appDir}/handler.js:2`,
      '  return "x" +;',
      '              ^',
      '',
      "SyntaxError: Unexpected token ';'",
      '    at wrapSafe (node:internal/modules/cjs/loader:1713:18)',
      '    at Object.loadJs [as .js] (file:///srv/runtimes/node/server.mjs:52:14)',
      `    at handle (file://${appDir}/lib.mjs:3:9)`,
      '    at file:///srv/runtimes/node/server.mjs:271:23',
    ].join('\n');
    assert.equal(
      startFailureText(output, place),
      [
        'sless-runtime: entrypoint "handler.handle": loading examples/hello/handler.js failed: examples/hello/handler.js:2',
        '  return "x" +;',
        '              ^',
        "SyntaxError: Unexpected token ';'",
        '    at handle (examples/hello/lib.mjs:3:9)',
      ].join('\n'),
    );
  });

  it("keeps Python's exception and the frames in the function's files, at the repository path", () => {
    const output = [
      `sless-runtime: entrypoint "handler.handle": importing module "handler" from ${appDir} failed:`,
      'Traceback (most recent call last):',
      '  File "/srv/runtimes/python/server.py", line 59, in load_handler',
      '    module = importlib.import_module(module_name)',
      '             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
      '  File "<frozen importlib._bootstrap>", line 1204, in _gcd_import',
      `  File "${appDir}/handler.py", line 1, in <module>`,
      '    import requests',
      "ModuleNotFoundError: No module named 'requests'",
    ].join('\n');
    assert.equal(
      startFailureText(output, place),
      [
        'sless-runtime: entrypoint "handler.handle": importing module "handler" from examples/hello failed:',
        '  File "examples/hello/handler.py", line 1, in <module>',
        '    import requests',
        "ModuleNotFoundError: No module named 'requests'",
      ].join('\n'),
    );
  });

  it('names files relative to the function for an uploaded function, and keeps the last lines only', () => {
    assert.equal(startFailureText(`${appDir}/handler.js:1\nError: x`, { appDir, shownAs: '' }), 'handler.js:1\nError: x');
    const many = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    assert.equal(startFailureText(many, place).split('\n').length, 6);
    assert.equal(startFailureText(many).split('\n')[0], 'line 14');
  });
});

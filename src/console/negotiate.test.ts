import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { negotiate } from './negotiate.ts';

describe('negotiate', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'text'],
    ['*/*', 'text'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8', 'html'],
    ['application/json', 'json'],
    ['application/json, text/plain, */*', 'json'],
    ['text/plain', 'text'],
    ['text/*', 'text'],
    ['application/json;q=0.5, text/html', 'html'],
    ['text/html;q=0, */*', 'text'],
    ['image/png', 'text'],
    ['garbage', 'text'],
  ];
  for (const [accept, answer] of cases) {
    it(`answers ${answer} to Accept: ${accept ?? '(none)'}`, () => assert.equal(negotiate(accept), answer));
  }
});

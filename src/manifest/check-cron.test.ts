import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCron, checkTimezone } from './check-cron.ts';

describe('checkCron: the syntax both Kubernetes CronJobs and croner accept', () => {
  const valid = [
    '0 3 * * *',
    '*/5 * * * *',
    '0 9-17/2 * * 1-5',
    '0 0 1,15 * *',
    '30 6 * jan,JUL sun',
    '0 0 ? * MON',
    ' 0 3 * * * ',
    '@hourly',
    '@daily',
    '@weekly',
    '@monthly',
    '@yearly',
    '@annually',
    '0 0 29 2 *', // a leap day: fires every four years
    '0 0 30 2 1', // day-of-month or Monday: both restricted, either matches
    '0 0 28-31 2 *',
    '0 0 31 1/2 *',
  ];
  for (const expr of valid) it(`accepts "${expr}"`, () => assert.equal(checkCron(expr), undefined));

  const invalid: Array<[string, RegExp]> = [
    ['* * * * * *', /6 field\(s\)/],
    ['0 3 * *', /4 field\(s\)/],
    ['', /1 field\(s\)/],
    ['60 * * * *', /minute field "60"/],
    ['0 24 * * *', /hour field "24"/],
    ['0 0 0 * *', /day of month field "0"/],
    ['0 0 * 13 *', /month field "13"/],
    ['0 0 * * 7', /day of week field "7"/],
    ['0 0 L * *', /L, W and # are not supported/],
    ['0 0 * * 5#3', /L, W and # are not supported/],
    ['5-3 * * * *', /runs backwards/],
    ['*/0 * * * *', /step "0"/],
    ['1/2/3 * * * *', /more than one/],
    ['? * * * *', /"\?" is allowed only/],
    ['0 0 * * FOO', /"FOO" is not a number 0\.\.6 or a name/],
    ['@midnight', /unknown descriptor/],
    // Never fires: refused here, before croner looks for the next date (it overflowed its stack on the first).
    ['0 0 31 4,6,9,11 *', /never fires: day 31 does not exist in month 4,6,9,11/],
    ['0 0 30 2 *', /never fires/],
    ['0 0 30-31 feb ?', /never fires/],
    ['@every 5m', /unknown descriptor/],
    ['CRON_TZ=UTC 0 3 * * *', /6 field\(s\)/],
  ];
  for (const [expr, why] of invalid) it(`refuses "${expr}"`, () => assert.match(checkCron(expr) ?? '', why));
});

describe('checkTimezone', () => {
  for (const zone of ['UTC', 'Europe/Moscow', 'America/Argentina/Buenos_Aires', 'Etc/GMT+3']) {
    it(`accepts ${zone}`, () => assert.equal(checkTimezone(zone), undefined));
  }
  for (const zone of ['Mars/Olympus', '+03:00', 'Europe/Moscow ', '', 'utc/../etc']) {
    it(`refuses ${JSON.stringify(zone)}`, () => assert.ok(checkTimezone(zone) !== undefined));
  }
});

// The wire tests' check that a refusal names the field it is about (wireKit.ts namesField): lock.proto's
// spelling, as a whole name. Before, `waitTimeoutMs` passed for `wait_timeout_ms`, and `id` for "invalid".
import { describe, expect, it } from 'vitest';
import { namesField } from './wireKit';

describe('namesField', () => {
  it('finds the proto spelling of a field as a whole name', () => {
    expect(namesField('wait_timeout_ms must be at most 300000', 'wait_timeout_ms')).toBe(true);
    expect(namesField('ops[1].value is longer than 65536 bytes', 'ops[1].value')).toBe(true);
    expect(namesField('member id "x y" is not a valid id', 'id')).toBe(true);
    expect(namesField('user "a b" already exists', 'a b')).toBe(true);
  });

  it('refuses the JSON spelling, and a name inside another word', () => {
    expect(namesField('waitTimeoutMs must be at most 300000', 'wait_timeout_ms')).toBe(false);
    expect(namesField('invalid member', 'id')).toBe(false);
    expect(namesField('ttl_ms_max exceeded', 'ttl_ms')).toBe(false);
    expect(namesField('ops[10].value is too long', 'ops[1].value')).toBe(false);
  });
});

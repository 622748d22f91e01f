// Semantic versions: the strict grammar of semver.org and its precedence rules (§11).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareSemver, parseSemver } from '../../src/accounts/semver.js';

const cmp = (a: string, b: string) => compareSemver(parseSemver(a)!, parseSemver(b)!);

describe('semver', () => {
  test('accepts valid versions and refuses the rest', () => {
    for (const v of ['0.0.0', '1.4.2', '10.20.30', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-0.3.7', '1.0.0-x.7.z.92', '1.0.0+20130313144700', '1.0.0-beta+exp.sha.5114f85']) {
      assert.ok(parseSemver(v), v);
    }
    for (const v of ['1', '1.2', 'v1.2.3', '01.2.3', '1.02.3', '1.2.3-', '1.2.3-01', '1.2.3+', ' 1.2.3', '1.2.3.4', '1.2.3-a..b', '']) {
      assert.equal(parseSemver(v), undefined, v);
    }
  });

  test('the precedence example chain of semver.org §11', () => {
    const chain = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.1.0', '2.0.0'];
    for (let i = 0; i + 1 < chain.length; i++) {
      assert.equal(cmp(chain[i]!, chain[i + 1]!), -1, `${chain[i]} < ${chain[i + 1]}`);
      assert.equal(cmp(chain[i + 1]!, chain[i]!), 1);
    }
    assert.equal(cmp('1.0.0+build.1', '1.0.0+build.2'), 0, 'build metadata is ignored');
  });

  const version = fc.record({
    major: fc.nat(30), minor: fc.nat(30), patch: fc.nat(30),
    pre: fc.array(fc.oneof(fc.nat(20).map(String), fc.constantFrom('alpha', 'beta', 'rc', 'x-1')), { maxLength: 3 }),
  }).map((v) => `${v.major}.${v.minor}.${v.patch}${v.pre.length ? `-${v.pre.join('.')}` : ''}`);

  test('property: a total order (antisymmetric, transitive, reflexive) and releases ordered numerically', () => {
    fc.assert(fc.property(version, version, version, (a, b, c) => {
      assert.equal(cmp(a, a), 0);
      assert.equal(cmp(a, b), -cmp(b, a));
      if (cmp(a, b) <= 0 && cmp(b, c) <= 0) assert.ok(cmp(a, c) <= 0);
      const [ra, rb] = [a.split('-')[0]!, b.split('-')[0]!];
      const ta = ra.split('.').map(Number);
      const tb = rb.split('.').map(Number);
      const numeric = Math.sign(ta[0]! - tb[0]! || ta[1]! - tb[1]! || ta[2]! - tb[2]!);
      if (numeric !== 0) assert.equal(cmp(a, b), numeric);
      else if (!a.includes('-') && b.includes('-')) assert.equal(cmp(a, b), 1, 'a release follows its prereleases');
    }), { numRuns: 500 });
  });
});

import { describe, expect, it } from 'vitest';
import { sayLess, sentences, withoutAsides, wordCount } from '../../../src/edge/slack/say-less.ts';

/*
 * What a woken reader sees of a long verdict or Next step in the channel: fewer words, never a
 * word cut in half. Asides go first, then later sentences, then later clauses.
 */

const VERDICT =
  'API record WIPED, empty-set hash cached (the PCP-6608 wipe, controller v4.9.1): the controller re-applies it only when it reconciles again, and has not. A controller inside prod cannot reconcile while the name resolves to nothing.';

/** Every word of `out` is a whole word of `text` (a clipped tail may carry `…`). */
function wholeWordsOf(text: string, out: string): boolean {
  const source = new Set(text.split(/\s+/).flatMap((w) => [w, w.replace(/[,;:.]$/, ''), w.replace(/^\(/, '')]));
  return out.split(/\s+/).every((w) => source.has(w) || source.has(w.replace(/[,;:.…]$/, '')));
}

describe('sayLess', () => {
  it('leaves a text already within the limit exactly as it was, asides and all', () => {
    const short = 'site-b-node1 (Failed commissioning): MAAS records eth0 as 52:54:00:b0:00:01.';
    expect(sayLess(short, 25)).toBe(short);
    expect(sayLess(short, wordCount(short))).toBe(short);
  });

  it('drops the bracketed asides first, and keeps every sentence when that is enough', () => {
    const text = 'The resolver 127.0.1.2 (the rack, first in DHCP option 6 (by design)) answers SERVFAIL. Nodes time out.';
    const out = sayLess(text, 8);
    expect(out).toBe('The resolver 127.0.1.2 answers SERVFAIL. Nodes time out.');
    expect(wordCount(out)).toBeLessThanOrEqual(8);
  });

  it('then keeps the first sentence, not cut at the dots of an IP address', () => {
    const text = 'The resolver 10.20.0.1 answers SERVFAIL for maas-internal. Nodes at site-b cannot find their cloud-config and commissioning times out after 30 minutes.';
    expect(sayLess(text, 8)).toBe('The resolver 10.20.0.1 answers SERVFAIL for maas-internal');
  });

  it("then keeps the longest run of whole leading clauses that fits (up to a ': ' or '; ', else a ', ')", () => {
    expect(sayLess(VERDICT, 25)).toBe('API record WIPED, empty-set hash cached: the controller re-applies it only when it reconciles again, and has not');
    expect(sayLess(VERDICT, 8)).toBe('API record WIPED, empty-set hash cached');
    expect(sayLess(VERDICT, 4)).toBe('API record WIPED');
  });

  it('a clause boundary inside brackets is not a place to stop', () => {
    const text = 'Set dns_servers [one: 10.0.0.5; two: 10.0.0.6] on the subnet and turn allow_dns off: MAAS then rewrites dhcpd.conf on every rack serving it';
    expect(sayLess(text, 13)).toBe('Set dns_servers [one: 10.0.0.5; two: 10.0.0.6] on the subnet and turn allow_dns off');
  });

  it('only a first clause longer than the limit is clipped, at a word boundary, with an ellipsis', () => {
    const text = 'Nodes on the isolated rack are handed a resolver that answers nothing for the zone they boot from';
    const out = sayLess(text, 6);
    expect(out).toBe('Nodes on the isolated rack are…');
    expect(wordCount(out)).toBe(6);
  });

  it('never says more than the limit and never cuts a word, at every limit from 1 to 40', () => {
    for (const text of [VERDICT, 'a'.repeat(300), 'one two, three four; five six: seven (eight nine) ten. Eleven twelve.']) {
      for (let max = 1; max <= 40; max += 1) {
        const out = sayLess(text, max);
        expect(wordCount(out), `${max}: ${out}`).toBeLessThanOrEqual(max);
        expect(wholeWordsOf(text, out), `${max}: ${out}`).toBe(true);
      }
    }
  });

  it('does not count emoji codes and lone separators as words', () => {
    expect(wordCount(':red_circle: *CRITICAL* · dns-check prod — wiped')).toBe(4);
  });
});

describe('the parts sayLess is built from', () => {
  it('withoutAsides removes nested asides and the space before punctuation they leave; an unclosed bracket stays', () => {
    expect(withoutAsides('MAAS (3.4 (and 3.5)) puts the rack first (by design), then the region.')).toBe('MAAS puts the rack first, then the region.');
    expect(withoutAsides('an open (bracket stays')).toBe('an open (bracket stays');
  });

  it("sentences splits at '. ' outside brackets, not inside an IP or a bracket", () => {
    expect(sentences('Forwarder 127.0.0.1 answers (serial 1. primary ns1). Subnet changed. Done.')).toEqual(['Forwarder 127.0.0.1 answers (serial 1. primary ns1)', 'Subnet changed', 'Done']);
  });
});

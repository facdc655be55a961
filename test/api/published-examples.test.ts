// The client against the platform's published contract: every 200 answer of the dashboard, alert
// and source endpoints, built from the examples of the platform's published OpenAPI document
// (copied into fixtures/published-examples.json, one answer per variant where the document offers
// a choice, e.g. email and webhook channels), parses with the client's response schemas.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS, type Operation } from '../../src/api/index.js';

const examples = JSON.parse(
  readFileSync(new URL('./fixtures/published-examples.json', import.meta.url), 'utf8'),
) as Record<string, unknown[]>;

describe('published response examples', () => {
  for (const [op, answers] of Object.entries(examples)) {
    it(`${op}: every example parses, unknown members passed through`, () => {
      for (const answer of answers) {
        const r = ENDPOINTS[op as Operation].response.safeParse(answer);
        expect(r.success ? 'ok' : JSON.stringify(r.error.issues.slice(0, 3))).toBe('ok');
      }
    });
  }

  it('an email channel keeps its recipients and a dashboard without createdAt parses', () => {
    const alerts = examples.getAlert!.map((a) => ENDPOINTS.getAlert.response.parse(a).result);
    expect(alerts.some((a) => Array.isArray(a.channel.emailRecipients))).toBe(true);
    const dash = ENDPOINTS.getDashboard.response.parse(examples.getDashboard![0]).result;
    expect(dash.createdAt).toBeUndefined();
  });
});

// A small valid config the loader tests break one way at a time. Line numbers matter: the tests
// name them. Keep this text and its numbered comment in step.
export const ORG = '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b';
export const SERVICE = 'a1000000-0000-4000-8000-000000000001';
export const PIPE = 'b1000000-0000-4000-8000-000000000001';

//  1 api:
//  2   baseUrl: embedded
//  3 pipes:
//  4   - name: orders
//  5     organizationId: ...
//  6     serviceId: ...
//  7     pipeId: ...
//  8     policy: weekday
//  9 policies:
// 10   weekday:
// 11     baseline: { replicas: 2 }
// 12     windows:
// 13       - name: business-hours
// 14         days: [mon, tue, wed, thu, fri]
// 15         start: "08:00"
// 16         end: "20:00"
// 17         timezone: Europe/Berlin
// 18         set: { replicas: 6 }
export const BASE = `api:
  baseUrl: embedded
pipes:
  - name: orders
    organizationId: ${ORG}
    serviceId: ${SERVICE}
    pipeId: ${PIPE}
    policy: weekday
policies:
  weekday:
    baseline: { replicas: 2 }
    windows:
      - name: business-hours
        days: [mon, tue, wed, thu, fri]
        start: "08:00"
        end: "20:00"
        timezone: Europe/Berlin
        set: { replicas: 6 }
`;

/** BASE with one exact fragment replaced (throws when the fragment is not there, so a typo fails loudly). */
export function breakBase(from: string, to: string, base = BASE): string {
  if (!base.includes(from)) throw new Error(`fixture has no ${JSON.stringify(from)}`);
  return base.replace(from, to);
}

import { describe, expect, it } from 'vitest';
import { PipeScaling } from '../../../src/api/index.js';
import { changesFor, driftOf, mergeReported } from '../../../src/daemon/model/scaling-values.js';

describe('scaling values', () => {
  it('a PATCH body holds only the fields of the kind that differ', () => {
    expect(
      changesFor(
        'stream',
        { replicas: 4, replicaCpuMillicores: 500, concurrency: 3 },
        { replicas: 2, replicaCpuMillicores: 500 },
      ),
    ).toEqual({ replicas: 4 });
    expect(changesFor('objectStorage', { concurrency: 0, replicas: 3 }, { concurrency: 2 })).toEqual({
      concurrency: 0,
    });
    expect(changesFor('database', { replicas: 3 }, {})).toEqual({});
  });

  it('a transient 0 or null keeps what was known (never what was sent: not in effect yet), never reads as the real value', () => {
    const reported = PipeScaling.parse({
      replicas: 4,
      replicaCpuMillicores: '0',
      replicaMemoryGb: null,
      concurrency: null,
    });
    expect(mergeReported({ replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, reported)).toEqual({
      replicas: 4,
      replicaCpuMillicores: 500,
      replicaMemoryGb: 2,
    });
    expect(mergeReported({}, PipeScaling.parse({ replicaCpuMillicores: '750m', replicaMemoryGb: '512Mi' }))).toEqual({
      replicaCpuMillicores: 750,
      replicaMemoryGb: 0.5,
    });
  });

  it('drift compares only fields both sides know', () => {
    expect(driftOf('stream', { replicas: 3, replicaCpuMillicores: 500 }, { replicas: 5 })).toEqual({ replicas: 5 });
    expect(driftOf('stream', { replicas: 3 }, { replicas: 3, replicaCpuMillicores: 900 })).toBeNull();
  });
});

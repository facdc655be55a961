// The state store's Lua scripts, each registered once per client (lua.ts) and called as the
// client method its ioredis augmentation below types. state-store.ts is their only caller.
import type { Result } from 'ioredis';

// Keys of one pipe under one prefix: a Redis Cluster needs a {hash tag} in the prefix, as BullMQ does.
// KEYS[6] is the marker (redis-guard.ts): the state the snapshot belongs to.
const SNAPSHOT_SCRIPT =
  "return {redis.call('HGETALL', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3]), redis.call('HGET', KEYS[4], ARGV[1]), redis.call('GET', KEYS[5]), redis.call('GET', KEYS[6])}";

// The state the marker (redis-guard.ts) names: "<since>/<lostAt>" ('' none, '?' unreadable), as
// redis-guard.ts stateOfMarker gives it. Redis lost the state when it differs from the one an
// evaluation's snapshot read: the marker gone, or written again by the replica that noticed (its
// rebuiltAt, written when the hold ends, is the same state).
export const STATE_OF_MARKER = `
local function stateOf(key)
  local m = redis.call('GET', key)
  if not m then return '' end
  local ok, v = pcall(cjson.decode, m)
  if not ok or type(v) ~= 'table' or type(v.since) ~= 'number' then return '?' end
  local lost = type(v.lostAt) == 'number' and string.format('%.0f', v.lostAt) or ''
  return string.format('%.0f', v.since) .. '/' .. lost
end
`;

// A decision of the tick ARGV[1], unless a newer tick's is stored; each one counted in
// `decisions`. ARGV[2]: that count in the record the fields are a difference from (state-store.ts
// writeDecision), refused with 2 when another decision was stored since; '' for a whole decision.
// ARGV[3]: the state the snapshot's marker (KEYS[2]) named ('' not checked): refused with 3 when
// Redis lost it since.
const WRITE_DECISION_SCRIPT = `${STATE_OF_MARKER}
if ARGV[3] ~= '' and stateOf(KEYS[2]) ~= ARGV[3] then return 3 end
local h = redis.call('HMGET', KEYS[1], 'decidedAt', 'decisions')
local cur = tonumber(h[1] or '')
if cur and cur > tonumber(ARGV[1]) then return 0 end
if ARGV[2] ~= '' and (h[2] or '0') ~= ARGV[2] then return 2 end
local n = tonumber(h[2] or '')
if not n or n ~= n or n < 0 or n >= 2^53 then n = 0 end
redis.call('HSET', KEYS[1], 'decisions', string.format('%d', math.floor(n) + 1), unpack(ARGV, 4))
return 1
`;

// A pipe's window verdicts, one per window start fleet-wide (verdicts.ts). ARGV[1]: open (a due
// verdict), close (the due one given) or exclude (given at once); ARGV[2] the boundary; ARGV[3]
// the JSON. open and exclude only for a boundary later than the due one's and the last given's;
// close only while the due one is that boundary's. 1 written, 0 refused (another replica did, or
// the marker KEYS[2] no longer names the state ARGV[4], '' not checked: Redis lost it since).
const VERDICT_SCRIPT = `${STATE_OF_MARKER}
if ARGV[4] ~= '' and stateOf(KEYS[2]) ~= ARGV[4] then return 0 end
local function boundary(field)
  local text = redis.call('HGET', KEYS[1], field)
  if not text then return -1 end
  local ok, v = pcall(cjson.decode, text)
  if ok and type(v) == 'table' and tonumber(v.boundary) then return tonumber(v.boundary) end
  return -1
end
local b = tonumber(ARGV[2])
local due = boundary('verdictDue')
if ARGV[1] == 'close' then
  if due ~= b then return 0 end
  redis.call('HSET', KEYS[1], 'lastVerdict', ARGV[3], 'verdictDue', 'null')
  return 1
end
if due >= b or boundary('lastVerdict') >= b then return 0 end
redis.call('HSET', KEYS[1], ARGV[1] == 'open' and 'verdictDue' or 'lastVerdict', ARGV[3])
return 1
`;

// A write conditioned on the change sent and not yet recorded (unsettled.ts): the fields ARGV[3..] go
// in only while the id of the record's `unsettled` is ARGV[2] ('' for none, or one without an id).
// The answer of a change, or a read, whose job lost its lock meanwhile is so recorded once: never
// over what another attempt recorded or sent since, whatever BullMQ thinks of the job. Nor into a
// state Redis lost since the turn's snapshot: the marker KEYS[2] must still name ARGV[1] ('' not
// checked), or an answer would make a record of the emptied one (with no `unsettled`, as it is).
const WRITE_IF_INTENT_SCRIPT = `${STATE_OF_MARKER}
if ARGV[1] ~= '' and stateOf(KEYS[2]) ~= ARGV[1] then return 0 end
local id = ''
local text = redis.call('HGET', KEYS[1], 'unsettled')
if text then
  local ok, v = pcall(cjson.decode, text)
  if ok and type(v) == 'table' and type(v.id) == 'string' then id = v.id end
end
if id ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return 1
`;

// A change's 200 recorded (work/turn-change.ts): the fields ARGV[5..] and the audit line it owes (field
// ARGV[3], text ARGV[4]: lifecycle/owed-line.ts) go in while the record's unsettled change is the
// intent ARGV[2], as WRITE_IF_INTENT_SCRIPT, and the marker KEYS[2] names the state ARGV[1]: 1.
// Refused (a read settled the change meanwhile, its request's time over), with the landed mark
// KEYS[3] of the intent set: 2, nothing written (the read reported it `landed_late`, and the 200's
// line is no outcome). Refused otherwise, the record there (its `ref`): the owed line alone, 3 (the
// 200's line is the change's one record: the read found it on its way). 0: the marker names
// another state (Redis lost it), or no record. One round trip for the answer and the landed mark.
const ANSWER_SCRIPT = `${STATE_OF_MARKER}
if ARGV[1] ~= '' and stateOf(KEYS[2]) ~= ARGV[1] then return 0 end
local id = ''
local text = redis.call('HGET', KEYS[1], 'unsettled')
if text then
  local ok, v = pcall(cjson.decode, text)
  if ok and type(v) == 'table' and type(v.id) == 'string' then id = v.id end
end
if id == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[4], unpack(ARGV, 5))
  return 1
end
if redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
if redis.call('HEXISTS', KEYS[1], 'ref') == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return 3
`;

// An owed audit line (lifecycle/owed-line.ts) as its holder stored or took it: the field ARGV[1]
// of the pipe's hash KEYS[1] while its dueAt is still ARGV[2]. ARGV[3] 'take': written over with
// ARGV[4] (a turn takes it, moving its dueAt on); 'clear': deleted (its line is written). 1 done,
// 0 refused (gone, or taken by another turn since).
const OWED_SCRIPT = `
local text = redis.call('HGET', KEYS[1], ARGV[1])
if not text then return 0 end
local ok, v = pcall(cjson.decode, text)
if not ok or type(v) ~= 'table' or tonumber(v.dueAt) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == 'take' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[4]) else redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
`;

// Fields ARGV[2..] of a hash (a pipe's, an organization's services), written only while the marker
// KEYS[2] names the state ARGV[1] (what an evaluation's or a turn's snapshot read): what it saw (a
// pause, an override, a freeze) or what a failed request says (its error, backoff, a service's
// state) never goes into a state Redis lost since, where it would start a record that lacks the rest.
const WRITE_IN_STATE_SCRIPT = `${STATE_OF_MARKER}
if stateOf(KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
`;

// A pipe's counter (failures, authFailures, drifts) raised by one, only while the marker KEYS[2]
// names the state ARGV[1], as WRITE_IN_STATE_SCRIPT: the new count, -1 when refused.
const INCREMENT_IN_STATE_SCRIPT = `${STATE_OF_MARKER}
if stateOf(KEYS[2]) ~= ARGV[1] then return -1 end
return redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** SNAPSHOT_SCRIPT: the pipe's hash, its pause, the pause of all, the services hash, its
     *  override, the marker; the service id. */
    pipescalerSnapshot(
      pipe: string,
      pause: string,
      pauseAll: string,
      services: string,
      override: string,
      marker: string,
      serviceId: string,
    ): Result<[string[], string | null, string | null, string | null, string | null, string | null], Context>;
    /** WRITE_DECISION_SCRIPT: the pipe's hash, the marker; the tick, the count of decisions of the
     *  record the fields are a difference from ('' for all fields), the state the decision was made
     *  in (stateOfMarker; '' unchecked), then field, value pairs. 1 written, 0 refused (a newer
     *  tick's decision is stored), 2 another decision was stored since the base (nothing written),
     *  3 the marker names another state (Redis lost it since). */
    pipescalerWriteDecision(
      pipe: string,
      marker: string,
      tickAt: string,
      base: string,
      state: string,
      ...fieldsAndValues: string[]
    ): Result<number, Context>;
    /** WRITE_IF_INTENT_SCRIPT: the pipe's hash, the marker; the state the turn read (stateOfMarker;
     *  '' unchecked), the id its unsettled change must have ('' none), then field, value pairs. 1
     *  written, 0 refused. */
    pipescalerWriteIfIntent(
      pipe: string,
      marker: string,
      state: string,
      intent: string,
      ...fieldsAndValues: string[]
    ): Result<number, Context>;
    /** ANSWER_SCRIPT: the pipe's hash, the marker, the intent's landed mark; the state the turn read
     *  (stateOfMarker; '' unchecked), the intent's id, the owed line's field and text, then field,
     *  value pairs. 1 recorded, 2 refused with the landed mark, 3 refused with the owed line stored
     *  alone, 0 refused. */
    pipescalerAnswer(
      pipe: string,
      marker: string,
      landed: string,
      state: string,
      intent: string,
      owedField: string,
      owedText: string,
      ...fieldsAndValues: string[]
    ): Result<number, Context>;
    /** OWED_SCRIPT: the pipe's hash; the owed line's field, its dueAt as held, take or clear, the
     *  new text (take). 1 done, 0 refused. */
    pipescalerOwed(
      pipe: string,
      field: string,
      dueAt: string,
      action: 'take' | 'clear',
      text: string,
    ): Result<number, Context>;
    /** WRITE_IN_STATE_SCRIPT: the hash, the marker; the state (stateOfMarker), then field, value
     *  pairs. 1 written, 0 refused (Redis lost that state). */
    pipescalerWriteInState(
      hash: string,
      marker: string,
      state: string,
      ...fieldsAndValues: string[]
    ): Result<number, Context>;
    /** INCREMENT_IN_STATE_SCRIPT: the pipe's hash, the marker; the state, the field. The new count,
     *  -1 refused. */
    pipescalerIncrementInState(pipe: string, marker: string, state: string, field: string): Result<number, Context>;
    /** VERDICT_SCRIPT: the pipe's hash, the marker; open, close or exclude, the boundary, the JSON,
     *  the state the evaluation read (stateOfMarker; '' unchecked). 1 written, 0 refused. */
    pipescalerVerdict(
      pipe: string,
      marker: string,
      action: 'open' | 'close' | 'exclude',
      boundary: string,
      json: string,
      state: string,
    ): Result<number, Context>;
  }
}

export const STORE_COMMANDS = [
  { name: 'pipescalerSnapshot', numberOfKeys: 6, lua: SNAPSHOT_SCRIPT },
  { name: 'pipescalerWriteDecision', numberOfKeys: 2, lua: WRITE_DECISION_SCRIPT },
  { name: 'pipescalerVerdict', numberOfKeys: 2, lua: VERDICT_SCRIPT },
  { name: 'pipescalerWriteIfIntent', numberOfKeys: 2, lua: WRITE_IF_INTENT_SCRIPT },
  { name: 'pipescalerAnswer', numberOfKeys: 3, lua: ANSWER_SCRIPT },
  { name: 'pipescalerOwed', numberOfKeys: 1, lua: OWED_SCRIPT },
  { name: 'pipescalerWriteInState', numberOfKeys: 2, lua: WRITE_IN_STATE_SCRIPT },
  { name: 'pipescalerIncrementInState', numberOfKeys: 2, lua: INCREMENT_IN_STATE_SCRIPT },
] as const;

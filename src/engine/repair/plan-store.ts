import type { Redis } from 'ioredis';
import type { Report, StepResult } from '../../core/report.ts';
import type { Journal, JournalEntry } from './journal.ts';
import { confirmOnReplica } from './journal-replica.ts';
import { acquirePlanLease, type JobLock, type PlanLease } from './plan-lease.ts';
import type { RepairPlan } from './plan.ts';
import { parsePlanRecord } from './plan-record.ts';

/**
 * pending → approved → executing → done | failed; pending → rejected | expired;
 * approved → superseded (the world changed before it ran).
 */
export type PlanState = 'pending' | 'approved' | 'rejected' | 'expired' | 'superseded' | 'executing' | 'done' | 'failed';

export interface StoredPlan {
  plan: RepairPlan;
  /** The plan as first posted (findings, plan, no results). */
  report: Report;
  requester: string;
  channel: string;
  createdAt: number;
  expiresAt: number;
  state: PlanState;
  messageTs?: string;
  decidedBy?: string;
  decidedAt?: number;
  results?: StepResult[];
  /** How many distinct approvers the plan needs (slack.approvalsRequired); 1 when absent. */
  required?: number;
  /** Who approved so far, first first (with several required, the plan runs at the last of them). */
  approvals?: Approval[];
}

export interface Approval {
  user: string;
  at: number;
}

export interface Refusal {
  user: string;
  action: 'approve' | 'reject';
  reason: string;
  at: number;
}

export type DecideResult =
  | { ok: true }
  | { ok: false; why: 'missing' }
  | { ok: false; why: 'expired' }
  | { ok: false; why: 'waiting'; count: number; required: number; duplicate: boolean }
  | { ok: false; why: 'decided'; state: PlanState; by?: string; at?: number };

export interface PlanStore {
  /** Stores a new plan as pending. A plan with the same id that is still pending, approved or running is kept and returned instead. */
  create(input: { plan: RepairPlan; report: Report; requester: string; channel: string; now: number; ttlMs: number; required?: number }): Promise<{ created: true } | { created: false; existing: StoredPlan }>;
  get(id: string): Promise<StoredPlan | null>;
  setMessage(id: string, ts: string): Promise<void>;
  /**
   * The one atomic transition out of pending: at most one caller ever gets `ok`. An approval of a
   * plan that needs several counts its approver once and answers `waiting` until the last one.
   */
  decide(id: string, decision: 'approved' | 'rejected', user: string, now: number): Promise<DecideResult>;
  /** Puts an approval back to pending (the execution could not be queued). */
  /** Takes back an approval whose run could not be queued; false when a worker already started it. */
  undoApproval(id: string, user: string): Promise<boolean>;
  /** approved → executing, atomically; false when the plan is not approved (undone, or another worker started it). */
  startExecution(id: string): Promise<boolean>;
  setState(id: string, state: PlanState, results?: StepResult[]): Promise<void>;
  recordRefusal(id: string, refusal: Refusal): Promise<void>;
  refusals(id: string): Promise<Refusal[]>;
  /** The plan's journal; given this run's lease, every write to it is fenced by the lease. */
  journal(id: string, lease?: PlanLease): Journal;
  /** Takes the plan's execution lease (see plan-lease.ts), waiting for an earlier run's to lapse. */
  lease(id: string, options: { ttlMs: number; jobLock?: JobLock; waitMs?: number }): Promise<PlanLease>;
}

/** How long a decided plan, its refusals and its journal are kept: for audit and resumes. */
const KEEP_MS = 7 * 24 * 3600 * 1000;

// KEYS[1] plan, KEYS[2] refusals, KEYS[3] journal, KEYS[4] approvals; ARGV now, record, expiresAt, requester, channel, keepMs, required
const CREATE = `
local state = redis.call('HGET', KEYS[1], 'state')
local now = tonumber(ARGV[1])
if state == 'approved' or state == 'executing' then return 'exists' end
if state == 'pending' and now <= tonumber(redis.call('HGET', KEYS[1], 'expiresAt')) then return 'exists' end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'state', 'pending', 'expiresAt', ARGV[3], 'requester', ARGV[4], 'channel', ARGV[5], 'createdAt', ARGV[1], 'required', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 'created'
`;

// KEYS[1] plan, KEYS[2] approvals (user -> when); ARGV decision, user, now, keepMs
const DECIDE = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing'} end
if state ~= 'pending' then
  return {'decided', state, redis.call('HGET', KEYS[1], 'decidedBy') or '', redis.call('HGET', KEYS[1], 'decidedAt') or ''}
end
if tonumber(ARGV[3]) > tonumber(redis.call('HGET', KEYS[1], 'expiresAt')) then
  redis.call('HSET', KEYS[1], 'state', 'expired')
  return {'expired'}
end
if ARGV[1] == 'approved' then
  local required = tonumber(redis.call('HGET', KEYS[1], 'required') or '1')
  local added = redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  local count = redis.call('HLEN', KEYS[2])
  if count < required then return {'waiting', tostring(count), tostring(required), tostring(added)} end
  if added == 0 then return {'waiting', tostring(count), tostring(required), '0'} end
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'decidedBy', ARGV[2], 'decidedAt', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {'ok'}
`;

// KEYS[1] plan, KEYS[2] approvals; ARGV user
const UNDO = `
if redis.call('HGET', KEYS[1], 'state') == 'approved' and redis.call('HGET', KEYS[1], 'decidedBy') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'state', 'pending')
  redis.call('HDEL', KEYS[1], 'decidedBy', 'decidedAt')
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
return 0
`;

// KEYS[1] plan, KEYS[2] journal. Executing but not begun: a worker died between the two; go on.
const START = `
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'approved' then
  redis.call('HSET', KEYS[1], 'state', 'executing')
  return 1
end
if state == 'executing' and redis.call('HEXISTS', KEYS[2], 'begun') == 0 then return 1 end
return 0
`;

/** Plans, approvals, refusals and journals in Redis, under `<prefix>:repair:`. */
export function createPlanStore(redis: Redis, options: { prefix?: string } = {}): PlanStore {
  const base = `${options.prefix ?? 'maas-chatops'}:repair`;
  const planKey = (id: string) => `${base}:plan:${id}`;
  const refusalsKey = (id: string) => `${base}:plan:${id}:refusals`;
  const journalKey = (id: string) => `${base}:plan:${id}:journal`;
  const approvalsKey = (id: string) => `${base}:plan:${id}:approvals`;
  // Never deleted with the plan: a token must never be handed out twice for one plan id.
  const fenceKey = (id: string) => `${base}:plan:${id}:fence`;
  const leaseKey = (id: string) => `${base}:plan:${id}:lease`;

  async function get(id: string): Promise<StoredPlan | null> {
    // Both hashes asked at once: one round trip, not two, on every click and every update.
    const [h, approvedBy] = await Promise.all([redis.hgetall(planKey(id)), redis.hgetall(approvalsKey(id))]);
    if (!h.record || !h.state) return null;
    const record = parsePlanRecord(id, h.record);
    const stored: StoredPlan = {
      plan: record.plan,
      report: record.report,
      requester: h.requester ?? '',
      channel: h.channel ?? '',
      createdAt: Number(h.createdAt),
      expiresAt: Number(h.expiresAt),
      state: h.state as PlanState,
    };
    if (h.messageTs) stored.messageTs = h.messageTs;
    if (h.decidedBy) stored.decidedBy = h.decidedBy;
    if (h.decidedAt) stored.decidedAt = Number(h.decidedAt);
    if (h.results) stored.results = JSON.parse(h.results) as StepResult[];
    const required = Number(h.required ?? 1);
    if (required > 1) stored.required = required;
    const approvals = Object.entries(approvedBy)
      .map(([user, at]) => ({ user, at: Number(at) }))
      .sort((a, b) => a.at - b.at);
    if (approvals.length) stored.approvals = approvals;
    return stored;
  }

  return {
    async create({ plan, report, requester, channel, now, ttlMs, required = 1 }) {
      const record = JSON.stringify({ plan, report });
      const answer = await redis.eval(CREATE, 4, planKey(plan.id), refusalsKey(plan.id), journalKey(plan.id), approvalsKey(plan.id), now, record, now + ttlMs, requester, channel, ttlMs + KEEP_MS, Math.max(1, Math.floor(required)));
      if (answer === 'created') return { created: true };
      const existing = await get(plan.id);
      if (!existing) throw new Error(`plan ${plan.id} vanished while it was being stored`);
      return { created: false, existing };
    },
    get,
    async setMessage(id, ts) {
      await redis.hset(planKey(id), 'messageTs', ts);
    },
    async decide(id, decision, user, now) {
      const answer = (await redis.eval(DECIDE, 2, planKey(id), approvalsKey(id), decision, user, now, KEEP_MS)) as string[];
      const [what, state, by, at] = answer;
      if (what === 'ok') return { ok: true };
      if (what === 'waiting') return { ok: false, why: 'waiting', count: Number(state), required: Number(by), duplicate: at === '0' };
      if (what === 'missing') return { ok: false, why: 'missing' };
      if (what === 'expired') return { ok: false, why: 'expired' };
      return { ok: false, why: 'decided', state: state as PlanState, ...(by ? { by } : {}), ...(at ? { at: Number(at) } : {}) };
    },
    async undoApproval(id, user) {
      return (await redis.eval(UNDO, 2, planKey(id), approvalsKey(id), user)) === 1;
    },
    async startExecution(id) {
      return (await redis.eval(START, 2, planKey(id), journalKey(id))) === 1;
    },
    async setState(id, state, results) {
      await redis.hset(planKey(id), 'state', state, ...(results ? ['results', JSON.stringify(results)] : []));
      await redis.pexpire(planKey(id), KEEP_MS);
    },
    async recordRefusal(id, refusal) {
      await redis.rpush(refusalsKey(id), JSON.stringify(refusal));
      await redis.pexpire(refusalsKey(id), KEEP_MS);
    },
    async refusals(id) {
      return (await redis.lrange(refusalsKey(id), 0, -1)).map((s) => JSON.parse(s) as Refusal);
    },
    journal(id, lease) {
      return redisJournal(redis, journalKey(id), lease);
    },
    lease(id, options) {
      return acquirePlanLease(redis, { planId: id, leaseKey: leaseKey(id), fenceKey: fenceKey(id), keepMs: KEEP_MS, ...options });
    },
  };
}

function redisJournal(redis: Redis, key: string, lease: PlanLease | undefined): Journal {
  return {
    async begin() {
      const first = (await redis.hsetnx(key, 'begun', String(Date.now()))) === 1;
      await redis.pexpire(key, KEEP_MS);
      return first;
    },
    async hasBegun() {
      return (await redis.hexists(key, 'begun')) === 1;
    },
    async get(index) {
      const raw = await redis.hget(key, `step:${index}`);
      return raw ? (JSON.parse(raw) as JournalEntry) : undefined;
    },
    async set(index, entry) {
      if (lease) await lease.checkAndSet(key, `step:${index}`, JSON.stringify(entry));
      else await redis.hset(key, `step:${index}`, JSON.stringify(entry));
    },
    confirm: () => confirmOnReplica(redis),
  };
}

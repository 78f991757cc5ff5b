"""The Lua scripts of the Redis checkpointer and lease backend, as named constants.

Each per-thread script receives the ten keys of ONE thread
(:attr:`~langgraph_recall.checkpoint.redis._keys.ThreadKeys.script`: eight data keys, the
lease and the slot registry) as ``KEYS``, so it touches a single cluster slot and runs
atomically: a reader sees a checkpoint with all of its blobs and index entries, or
nothing. Only core commands are used (hashes, sorted sets, strings, ``cmsgpack``), so any
Redis >= 6.2 or Valkey runs them.

The write guard (see :mod:`langgraph_recall.checkpoint._guard`) lives here, in the same
script as each write: errors a script raises on purpose start with ``LGM_BUSY`` (a live
lease and no token) or ``LGM_STALE`` (fencing rejection). The integrity rules of ``PUT``
answer with a *status* instead of an error (a reply, not text to parse: redis-py words
pipeline errors differently across versions): ``["LGM_INTEGRITY", "parent"]`` (the
parent was deleted by retention) or ``["LGM_INTEGRITY", "blobs", <positions>...]`` (reused
values with no stored blob, which the saver then writes from the checkpoint). Every
refusal comes before anything is written.

Example:
    ```python
    from langgraph_recall.checkpoint.redis._scripts import SCRIPTS

    assert "PUT" in SCRIPTS and "redis.call" in SCRIPTS["PUT"]
    ```
"""

from __future__ import annotations

import hashlib

__all__ = [
    "BUSY_ERROR_MARK",
    "INTEGRITY_ERROR_MARK",
    "PRUNE_BUSY",
    "SCRIPTS",
    "SCRIPT_SHAS",
    "STALE_ERROR_MARK",
]

STALE_ERROR_MARK = "LGM_STALE"
"""``LGM_STALE <reason>`` (``held``, ``free`` or ``gone``: see
:data:`~langgraph_recall.checkpoint._guard.STALE_REASONS`); never a token."""
BUSY_ERROR_MARK = "LGM_BUSY"
"""A write without a token while the thread's lease is held."""
INTEGRITY_ERROR_MARK = "LGM_INTEGRITY"
"""First item of ``PUT``'s status reply ``[mark, "parent"]`` or ``[mark, "blobs", <1-based
positions of the missing reused fields>...]`` (a reply, never an error)."""
PRUNE_BUSY = -1
"""What ``PRUNE`` returns for a leased thread (the plan prunes the others, then raises)."""

# Fencing tokens (see langgraph_recall.lease._tokens): token = sequence .. six secret digits,
# kept and compared as TEXT (a Lua number is a double: 17 digits do not survive tonumber).
# The sequence is max(previous + 1, server clock in ms since 2025-01-01): a server that
# restarted from an older snapshot, or a promoted replica, lost only tokens issued in the
# past -- below its clock -- so it never hands one of them out again. The secret digits
# come from the acquiring worker's CSPRNG.
#
# The epoch is this server process's run id (INFO server): a restart -- from whatever
# snapshot -- and a failover to a replica both change it. A lease records the epoch it was
# taken or last renewed under, and is live only under that epoch: a lease whose server
# history ended never makes its thread busy (its holder's connection died with it).
# A lease value is "@<token>|<epoch>|<owner>" (earlier versions wrote "<token>|<owner>":
# no epoch, live by its TTL alone).
_TOKENS = r"""
local BASE_MS = 1735689600000
local function clock_ms()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - BASE_MS
end

-- The sequence of a token (text; '~<token>': a deleted thread's floor); -1 for none.
local function sequence_of(token)
  if not token then return -1 end
  if string.sub(token, 1, 1) == '~' then token = string.sub(token, 2) end
  if #token <= 6 then return 0 end
  return tonumber(string.sub(token, 1, -7))
end

local function next_token(key, secret)
  local seq = math.max(sequence_of(redis.call('GET', key)) + 1, clock_ms(), 0)
  -- canonical decimal text (what the workers send back): no leading zeros
  local token = string.gsub(string.format('%d', seq) .. secret, '^0+(%d)', '%1')
  redis.call('SET', key, token, 'KEEPTTL')
  return token
end

local EPOCH = nil
local function server_epoch()
  if EPOCH == nil then
    local info = redis.pcall('INFO', 'server')
    EPOCH = type(info) == 'string' and string.match(info, 'run_id:(%x+)') or ''
  end
  return EPOCH
end

local function parse_lease(held)
  if string.sub(held, 1, 1) ~= '@' then
    local bar = string.find(held, '|', 1, true) or (#held + 1)
    return string.sub(held, 1, bar - 1), nil, string.sub(held, bar + 1)
  end
  local a = string.find(held, '|', 2, true)
  local b = string.find(held, '|', a + 1, true)
  return string.sub(held, 2, a - 1), string.sub(held, a + 1, b - 1), string.sub(held, b + 1)
end

local function lease_value(token, owner)
  return '@' .. token .. '|' .. server_epoch() .. '|' .. owner
end

-- The thread's live lease as (token, owner), or nil: its key exists (PX) under this epoch.
local function live_lease(key)
  local held = redis.call('GET', key)
  if not held then return nil end
  local token, epoch, owner = parse_lease(held)
  if epoch ~= nil and epoch ~= server_epoch() then return nil end
  return token, owner
end
"""

_THREAD_HELPERS = r"""
local IDX, CP, REFS, BLOBS, W, WK, RUNS, FENCE, LEASE, REG =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local SEP = '\0'
-- The refs field holding the newest (quoted) checkpoint id retention deleted; no
-- checkpoint member is named like it (every member holds SEP).
local PRUNED = 'pruned'

-- a <= b, byte by byte (Lua's own comparison follows the server's locale).
local function at_or_before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a <= #b
end

-- The checkpoint id part of a member.
local function member_id(m)
  return string.sub(m, string.find(m, SEP, 1, true) + 1)
end

local function each_chunk(cmd, key, items)
  local i, n = 1, #items
  while i <= n do
    local j = math.min(i + 499, n)
    redis.call(cmd, key, unpack(items, i, j))
    i = j + 1
  end
end

-- HMGET in chunks (Lua's unpack() caps the number of arguments).
local function hmget(key, fields)
  local out, i, n = {}, 1, #fields
  while i <= n do
    local j = math.min(i + 499, n)
    local vals = redis.call('HMGET', key, unpack(fields, i, j))
    for k = 1, j - i + 1 do out[i + k - 1] = vals[k] end
    i = j + 1
  end
  return out
end

-- The write guard: while the thread has a live lease, a write needs the holder's token;
-- a token, when given, must equal the thread's current one ('' = the write carries none).
-- A refusal says what happened (held / free / gone), never a token.
local function guard(token)
  if token == '' then
    if live_lease(LEASE) then return redis.error_reply('LGM_BUSY') end
    return false
  end
  local current = redis.call('GET', FENCE)
  if current ~= token then
    local reason = 'gone'
    if current and string.sub(current, 1, 1) ~= '~' then
      reason = live_lease(LEASE) and 'held' or 'free'
    end
    return redis.error_reply('LGM_STALE ' .. reason)
  end
  return false
end

-- Restart the TTL of the thread's data keys and fence ('0' = no TTL); never below what
-- is left of a held lease, so a leased thread cannot expire under its holder.
local function touch(ms)
  if ms ~= '0' then
    local keep = tonumber(ms)
    local left = redis.call('PTTL', LEASE)
    if left > keep then keep = left end
    for i = 1, 8 do redis.call('PEXPIRE', KEYS[i], keep) end
  end
end

-- Erasure: advance the fencing token and free the lease, so the holder's later writes
-- are refused (a delete is never undone). ttl: the fence key's TTL ('0' = none).
local function fence_out(ttl, secret)
  local token = next_token(FENCE, secret)
  redis.call('DEL', LEASE)
  if ttl ~= '0' then redis.call('PEXPIRE', FENCE, ttl) end
  return token
end

-- Delete checkpoints with their writes and run entries (retention: the newest id deleted
-- is remembered, so a later put onto a deleted parent is refused); return the blob
-- fields they used.
local function drop(members)
  local freed, gone = {}, {}
  local top = redis.call('HGET', REFS, PRUNED)
  for _, m in ipairs(members) do
    gone[m] = true
    local id = member_id(m)
    if not top or not at_or_before(id, top) then top = id end
    local raw = redis.call('HGET', REFS, m)
    if raw then
      local refs = cmsgpack.unpack(raw)
      if refs[2] ~= '' then redis.call('ZREM', RUNS, refs[2] .. SEP .. m) end
      for i = 3, #refs do freed[refs[i]] = true end
    end
    local ws = redis.call('ZRANGEBYLEX', WK, '[' .. m .. SEP, '(' .. m .. '\1')
    if #ws > 0 then
      each_chunk('HDEL', W, ws)
      each_chunk('ZREM', WK, ws)
    end
  end
  if #members > 0 then
    each_chunk('ZREM', IDX, members)
    each_chunk('HDEL', CP, members)
    each_chunk('HDEL', REFS, members)
    redis.call('HSET', REFS, PRUNED, top)
  end
  return freed, gone
end

-- Delete the blobs no remaining checkpoint references; unlink children of dropped parents.
-- Blob fields and parents never cross namespaces, so with `ns` only that namespace is read.
local function collect(freed, gone, ns)
  local all = {}
  if ns then
    local members = redis.call('ZRANGEBYLEX', IDX, '[' .. ns .. SEP, '(' .. ns .. '\1')
    local vals = hmget(REFS, members)
    for k = 1, #members do
      if vals[k] then
        all[#all + 1] = members[k]
        all[#all + 1] = vals[k]
      end
    end
  else
    all = redis.call('HGETALL', REFS)
  end
  for i = 1, #all, 2 do
    local m = all[i]
    if m ~= PRUNED then
      local refs = cmsgpack.unpack(all[i + 1])
      for j = 3, #refs do freed[refs[j]] = nil end
      if refs[1] ~= '' then
        local ns = string.sub(m, 1, string.find(m, SEP, 1, true))
        if gone[ns .. refs[1]] then
          refs[1] = ''
          redis.call('HSET', REFS, m, cmsgpack.pack(refs))
        end
      end
    end
  end
  local dead = {}
  for f in pairs(freed) do dead[#dead + 1] = f end
  if #dead > 0 then each_chunk('HDEL', BLOBS, dead) end
end

local function load(m)
  local rec = redis.call('HGET', CP, m)
  if not rec then return false end
  local raw = redis.call('HGET', REFS, m) or ''
  local blobs = {}
  if raw ~= '' then
    local refs = cmsgpack.unpack(raw)
    if #refs > 2 then
      local fields = {}
      for i = 3, #refs do fields[#fields + 1] = refs[i] end
      local vals = hmget(BLOBS, fields)
      for i = 1, #fields do
        if vals[i] then
          blobs[#blobs + 1] = fields[i]
          blobs[#blobs + 1] = vals[i]
        end
      end
    end
  end
  local writes = {}
  local ws = redis.call('ZRANGEBYLEX', WK, '[' .. m .. SEP, '(' .. m .. '\1')
  if #ws > 0 then
    local vals = hmget(W, ws)
    for i = 1, #ws do
      if vals[i] then writes[#writes + 1] = vals[i] end
    end
  end
  return {m, rec, raw, blobs, writes}
end
"""
_PRELUDE = _TOKENS + _THREAD_HELPERS

# ARGV: fence token ('' = unfenced), ttl ms ('0' = none), keep-last ('0' = all),
# member, record, refs, run member ('' = none), parent member ('' = none), thread id,
# n, then the n reused blob fields that must exist, then blob field/value pairs.
# Checks everything before writing anything; registers the thread in its slot registry.
_PUT = r"""
local err = guard(ARGV[1])
if err then return err end
local m = ARGV[4]
-- The integrity rules answer with a status (never an error text to parse).
if ARGV[8] ~= '' and redis.call('HEXISTS', CP, ARGV[8]) == 0 then
  local pruned = redis.call('HGET', REFS, PRUNED)
  if pruned and at_or_before(member_id(ARGV[8]), pruned) then
    return {'LGM_INTEGRITY', 'parent'}
  end
end
local reused = tonumber(ARGV[10])
local missing = {'LGM_INTEGRITY', 'blobs'}
for i = 11, 10 + reused do
  if redis.call('HEXISTS', BLOBS, ARGV[i]) == 0 then missing[#missing + 1] = i - 10 end
end
if #missing > 2 then return missing end
-- The index entry goes last: it is what makes the checkpoint visible.
for i = 11 + reused, #ARGV, 2 do redis.call('HSETNX', BLOBS, ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', REG, 'NX', 0, ARGV[9])
redis.call('HSET', REFS, m, ARGV[6])
if ARGV[7] ~= '' then redis.call('ZADD', RUNS, 0, ARGV[7]) end
redis.call('HSET', CP, m, ARGV[5])
redis.call('ZADD', IDX, 0, m)
local keep = tonumber(ARGV[3])
if keep > 0 then
  local ns = string.sub(m, 1, string.find(m, SEP, 1, true) - 1)
  local lo, hi = '[' .. ns .. SEP, '(' .. ns .. '\1'
  local n = redis.call('ZLEXCOUNT', IDX, lo, hi)
  if n > keep then
    local old = redis.call('ZRANGEBYLEX', IDX, lo, hi, 'LIMIT', 0, n - keep)
    local freed, gone = drop(old)
    collect(freed, gone, ns)
  end
end
touch(ARGV[2])
return 1
"""

# ARGV: fence token, ttl ms, retention guard member ('' = none), then
# (field, payload, upsert '1'/'0') triples. With keep-last retention, writes that
# arrive (durability="async") after their checkpoint was retired are dropped: the
# checkpoint is absent and older than every kept checkpoint of its namespace (a
# checkpoint not stored yet is always newer than those).
_PUT_WRITES = r"""
local err = guard(ARGV[1])
if err then return err end
local guard = ARGV[3]
if guard ~= '' and not redis.call('ZSCORE', IDX, guard) then
  local ns = string.sub(guard, 1, string.find(guard, SEP, 1, true) - 1)
  local first = redis.call('ZRANGEBYLEX', IDX, '[' .. ns .. SEP, '(' .. ns .. '\1', 'LIMIT', 0, 1)
  if #first > 0 and guard < first[1] then return 0 end
end
for i = 4, #ARGV, 3 do
  if ARGV[i + 2] == '1' then
    redis.call('HSET', W, ARGV[i], ARGV[i + 1])
    redis.call('ZADD', WK, 0, ARGV[i])
  elseif redis.call('HSETNX', W, ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('ZADD', WK, 0, ARGV[i])
  end
end
touch(ARGV[2])
return 1
"""

# ARGV: refresh ttl ms ('0' = no refresh), 'latest' + quoted ns | 'exact' + members...
_LOAD = r"""
local out = {}
if ARGV[2] == 'latest' then
  local ns = ARGV[3]
  local top = redis.call('ZREVRANGEBYLEX', IDX, '(' .. ns .. '\1', '[' .. ns .. SEP, 'LIMIT', 0, 1)
  if top[1] then out[1] = load(top[1]) end
else
  for i = 3, #ARGV do out[#out + 1] = load(ARGV[i]) end
end
touch(ARGV[1])
return out
"""

# ARGV: refresh ttl ms, quoted ns, quoted target checkpoint id ('' = latest), quoted channels...
# Walks the parent chain from the target's parent; per ancestor returns its member, its
# writes and the (channel, blob) seeds found there; a channel stops at its first seed.
_DELTA_HISTORY = r"""
local ns = ARGV[2]
local remaining, left = {}, 0
for i = 4, #ARGV do
  if not remaining[ARGV[i]] then
    remaining[ARGV[i]] = true
    left = left + 1
  end
end
local out = {}
local raw
if ARGV[3] == '' then
  local top = redis.call('ZREVRANGEBYLEX', IDX, '(' .. ns .. '\1', '[' .. ns .. SEP, 'LIMIT', 0, 1)
  if top[1] then raw = redis.call('HGET', REFS, top[1]) end
else
  raw = redis.call('HGET', REFS, ns .. SEP .. ARGV[3])
end
local cursor = raw and cmsgpack.unpack(raw)[1] or ''
while cursor ~= '' and left > 0 do
  local m = ns .. SEP .. cursor
  local r = redis.call('HGET', REFS, m)
  if not r then break end
  local refs = cmsgpack.unpack(r)
  local writes = {}
  local ws = redis.call('ZRANGEBYLEX', WK, '[' .. m .. SEP, '(' .. m .. '\1')
  if #ws > 0 then
    local vals = hmget(W, ws)
    for i = 1, #ws do
      if vals[i] then writes[#writes + 1] = vals[i] end
    end
  end
  local seeds = {}
  for i = 3, #refs do
    local f = refs[i]
    local a = string.find(f, SEP, 1, true)
    local b = string.find(f, SEP, a + 1, true)
    local ch = string.sub(f, a + 1, b - 1)
    if remaining[ch] then
      local v = redis.call('HGET', BLOBS, f)
      if v then
        seeds[#seeds + 1] = f
        seeds[#seeds + 1] = v
        remaining[ch] = nil
        left = left - 1
      end
    end
  end
  out[#out + 1] = {m, writes, seeds}
  cursor = refs[1]
end
touch(ARGV[1])
return out
"""

# ARGV: fence ttl ms (unused), thread id. Erasure: never refused by a lease, and nothing
# named after the thread is left -- the token key goes too. A holder's later writes are
# still refused (no current token), and the thread's next token is floored at the server
# clock, above every token handed out before. Only while the last token's sequence is not
# yet below the clock (it was issued this very millisecond) does its key stay, as the floor
# '~<token>' that no write's token equals, for those few milliseconds (at most 10 s after a
# clock step back), so the next token still exceeds it.
# Returns 1.
_DELETE_THREAD = r"""
local last = redis.call('GET', FENCE)
redis.call('DEL', IDX, CP, REFS, BLOBS, W, WK, RUNS, FENCE, LEASE)
redis.call('ZREM', REG, ARGV[2])
if last then
  local wait = sequence_of(last) - clock_ms() + 1
  if wait > 0 then redis.call('SET', FENCE, '~' .. last, 'PX', math.min(wait, 10000)) end
end
return 1
"""

# ARGV: members to delete (the caller read them from a snapshot; newer ones survive).
# A write without a token: refused while the thread is leased (returns -1, nothing done).
_PRUNE = r"""
if live_lease(LEASE) then return -1 end
local freed, gone = drop(ARGV)
collect(freed, gone)
return #ARGV
"""

# ARGV: fence ttl ms, thread id, six secret digits, quoted run ids. Erasure: never refused
# by a lease; when it deletes something it fences the holder out like delete_thread.
_DELETE_RUNS = r"""
local members = {}
for i = 4, #ARGV do
  local lo = ARGV[i] .. SEP
  local rows = redis.call('ZRANGEBYLEX', RUNS, '[' .. lo, '(' .. ARGV[i] .. '\1')
  for _, r in ipairs(rows) do members[#members + 1] = string.sub(r, #lo + 1) end
end
if #members > 0 then
  local freed, gone = drop(members)
  collect(freed, gone)
  fence_out(ARGV[1], ARGV[3])
  if redis.call('EXISTS', IDX) == 0 then
    redis.call('HDEL', REFS, PRUNED)
    redis.call('ZREM', REG, ARGV[2])
  end
end
return #members
"""

# Returns the whole thread: idx, cp, refs, blobs, w, wk, runs (flat lists).
_DUMP = r"""
return {
  redis.call('ZRANGE', IDX, 0, -1),
  redis.call('HGETALL', CP),
  redis.call('HGETALL', REFS),
  redis.call('HGETALL', BLOBS),
  redis.call('HGETALL', W),
  redis.call('ZRANGE', WK, 0, -1),
  redis.call('ZRANGE', RUNS, 0, -1),
}
"""

# ARGV: ttl ms, then the lengths of the 7 dumped lists, target thread id, then the items.
# A write into the target without a token: refused while the target is leased.
_RESTORE = r"""
local err = guard('')
if err then return err end
local pos = 10
local function take(n)
  local items = {}
  for i = pos, pos + n - 1 do items[#items + 1] = ARGV[i] end
  pos = pos + n
  return items
end
local parts = {}
for k = 1, 7 do parts[k] = take(tonumber(ARGV[k + 1])) end
local zsets = {[1] = IDX, [6] = WK, [7] = RUNS}
local hashes = {[2] = CP, [3] = REFS, [4] = BLOBS, [5] = W}
for k, key in pairs(zsets) do
  for _, m in ipairs(parts[k]) do redis.call('ZADD', key, 0, m) end
end
for k, key in pairs(hashes) do
  local items = parts[k]
  for i = 1, #items, 2 do redis.call('HSET', key, items[i], items[i + 1]) end
end
if #parts[1] > 0 then redis.call('ZADD', REG, 'NX', 0, ARGV[9]) end
touch(ARGV[1])
return #parts[1]
"""

# KEYS[1] a slot registry, KEYS[2..n+1] the index keys of n of its threads; ARGV: their ids.
# Forgets the threads that have no checkpoint (emptied, or expired by TTL) -- atomically
# with the check, so a thread written meanwhile is never forgotten.
_REGISTRY_FORGET = r"""
local n = 0
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then
    n = n + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return n
"""

# ARGV: thread id. Registers the thread in its slot registry if it has checkpoints
# (setup()'s migration of the layout-v1 registry).
_REGISTER = r"""
if redis.call('EXISTS', IDX) == 1 then return redis.call('ZADD', REG, 'NX', 0, ARGV[1]) end
return 0
"""

# Lease scripts get the thread's keys too: the lease keeps the thread alive.
_KEEP_ALIVE = r"""
-- Keep the data keys and fence alive at least as long as the lease (ttl '0': no TTL).
local function keep_alive(ttl, lease_ms)
  if ttl == '0' then return end
  local keep = math.max(tonumber(ttl), tonumber(lease_ms))
  for i = 1, 8 do redis.call('PEXPIRE', KEYS[i], keep) end
end
"""

# ARGV: owner, lease ms, thread ttl ms ('0' = keep forever), six secret digits. Returns the
# token (text) or nil. A lease taken under an epoch that has ended is free. Idempotent: a
# retried call by the same owner (its reply was lost) gets its token back.
_LEASE_ACQUIRE = r"""
local token, owner = live_lease(LEASE)
if token then
  if owner == ARGV[1] then return token end
  return false
end
token = next_token(FENCE, ARGV[4])
redis.call('SET', LEASE, lease_value(token, ARGV[1]), 'PX', ARGV[2])
keep_alive(ARGV[3], ARGV[2])
return token
"""

# ARGV: owner, lease ms, token, thread ttl ms. 1 = renewed (and stamped with this epoch:
# a holder that outlived a restart keeps its thread if it renews before anyone takes it),
# 0 = lost (taken over, or the thread deleted).
_LEASE_RENEW = r"""
if redis.call('GET', FENCE) ~= ARGV[3] then return 0 end
local held = redis.call('GET', LEASE)
if held then
  local token, _, owner = parse_lease(held)
  if token ~= ARGV[3] or owner ~= ARGV[1] then return 0 end
end
redis.call('SET', LEASE, lease_value(ARGV[3], ARGV[1]), 'PX', ARGV[2])
keep_alive(ARGV[4], ARGV[2])
return 1
"""

# ARGV: owner, token. 1 = released, 0 = not held by this lease.
_LEASE_RELEASE = r"""
local held = redis.call('GET', LEASE)
if held then
  local token, _, owner = parse_lease(held)
  if token == ARGV[2] and owner == ARGV[1] then
    redis.call('DEL', LEASE)
    return 1
  end
end
return 0
"""

SCRIPTS: dict[str, str] = {
    "PUT": _PRELUDE + _PUT,
    "PUT_WRITES": _PRELUDE + _PUT_WRITES,
    "LOAD": _PRELUDE + _LOAD,
    "DELTA_HISTORY": _PRELUDE + _DELTA_HISTORY,
    "DELETE_THREAD": _PRELUDE + _DELETE_THREAD,
    "PRUNE": _PRELUDE + _PRUNE,
    "DELETE_RUNS": _PRELUDE + _DELETE_RUNS,
    "DUMP": _PRELUDE + _DUMP,
    "RESTORE": _PRELUDE + _RESTORE,
    "REGISTRY_FORGET": _REGISTRY_FORGET,
    "REGISTER": _PRELUDE + _REGISTER,
    "LEASE_ACQUIRE": _PRELUDE + _KEEP_ALIVE + _LEASE_ACQUIRE,
    "LEASE_RENEW": _PRELUDE + _KEEP_ALIVE + _LEASE_RENEW,
    "LEASE_RELEASE": _PRELUDE + _LEASE_RELEASE,
}
"""Script name -> Lua source."""

SCRIPT_SHAS: dict[str, str] = {
    name: hashlib.sha1(source.encode()).hexdigest() for name, source in SCRIPTS.items()
}
"""Script name -> SHA1 used with ``EVALSHA``."""

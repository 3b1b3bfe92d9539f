// Threads: create (with an id, ifExists), get, update (metadata), search
// (metadata filter, paging, sort), copy, delete, and the state API:
// getState after a run (LangChain message shapes), updateState,
// getHistory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  ASSISTANT, STREAM_MS, assertAnswer, client, input, kindOf, newThread, rejectsWithStatus, short, textOf, unique,
} from "./helpers.mjs";

test("threads.create, get and delete", { timeout: 10_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t, { owner: "sdk" });
  assert.equal(typeof th.thread_id, "string", `created ${short(th)}`);
  assert.equal(th.status, "idle", `a new thread's status in ${short(th)}`);
  assert.equal(th.metadata?.owner, "sdk", `metadata of ${short(th)}`);
  for (const k of ["created_at", "updated_at"]) assert.equal(typeof th[k], "string", `thread.${k} in ${short(th)}`);

  const got = await c.threads.get(th.thread_id);
  assert.equal(got.thread_id, th.thread_id);
  assert.equal(got.metadata?.owner, "sdk");

  const deleted = await c.threads.delete(th.thread_id);
  assert.equal(deleted, undefined, "delete answers 204/202 with no body (the SDK returns undefined)");
  await rejectsWithStatus(() => c.threads.get(th.thread_id), [404], "get after delete");
  await rejectsWithStatus(() => c.threads.get(randomUUID()), [404], "get of an unknown thread");
  await rejectsWithStatus(() => c.threads.delete(randomUUID()), [404], "delete of an unknown thread");
});

test("threads.create with a threadId, and ifExists", { timeout: 10_000 }, async (t) => {
  const c = client();
  const id = randomUUID();
  const th = await c.threads.create({ threadId: id, metadata: { sdk_suite: t.name, first: true } });
  assert.equal(th.thread_id, id, `created ${short(th)}`);
  // The default (raise): a second create with the id is a conflict.
  await rejectsWithStatus(() => c.threads.create({ threadId: id }), [409], "create of an existing thread id");
  const again = await c.threads.create({ threadId: id, ifExists: "do_nothing", metadata: { first: false } });
  assert.equal(again.thread_id, id);
  assert.equal(again.metadata?.first, true, `do_nothing returns the existing thread unchanged: ${short(again)}`);
});

test("threads.update merges metadata", { timeout: 10_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t, { a: 1 });
  const up = await c.threads.update(th.thread_id, { metadata: { b: "two" } });
  assert.equal(up.thread_id, th.thread_id);
  assert.equal(up.metadata?.a, 1, `update keeps the other keys: ${short(up.metadata)}`);
  assert.equal(up.metadata?.b, "two", `update sets the key: ${short(up.metadata)}`);
  const got = await c.threads.get(th.thread_id);
  assert.deepEqual({ a: got.metadata?.a, b: got.metadata?.b }, { a: 1, b: "two" });
  assert.ok(got.updated_at >= th.updated_at, `updated_at ${got.updated_at} < ${th.updated_at}`);
  await rejectsWithStatus(() => c.threads.update(randomUUID(), { metadata: { x: 1 } }), [404], "update of an unknown thread");
});

test("threads.search: metadata filter, limit/offset, sortBy updated_at", { timeout: 10_000 }, async (t) => {
  const c = client();
  const tag = unique("search");
  const ids = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await c.threads.create({ metadata: { sdk_suite: t.name, tag, i } })).thread_id);
    await new Promise((r) => setTimeout(r, 15)); // distinct timestamps
  }
  const all = await c.threads.search({ metadata: { tag }, limit: 10 });
  assert.deepEqual(new Set(all.map((x) => x.thread_id)), new Set(ids), `search by metadata: ${short(all, 800)}`);
  const one = await c.threads.search({ metadata: { tag, i: 1 } });
  assert.deepEqual(one.map((x) => x.thread_id), [ids[1]], "search by two metadata keys");

  // Touch the first: by updated_at descending it comes first.
  await c.threads.update(ids[0], { metadata: { touched: true } });
  const desc = await c.threads.search({ metadata: { tag }, sortBy: "updated_at", sortOrder: "desc" });
  assert.deepEqual(desc.map((x) => x.thread_id), [ids[0], ids[2], ids[1]], "sortBy updated_at desc");
  const asc = await c.threads.search({ metadata: { tag }, sortBy: "updated_at", sortOrder: "asc" });
  assert.deepEqual(asc.map((x) => x.thread_id), [ids[1], ids[2], ids[0]], "sortBy updated_at asc");

  const page1 = await c.threads.search({ metadata: { tag }, sortBy: "updated_at", sortOrder: "desc", limit: 2, offset: 0 });
  const page2 = await c.threads.search({ metadata: { tag }, sortBy: "updated_at", sortOrder: "desc", limit: 2, offset: 2 });
  assert.deepEqual(page1.map((x) => x.thread_id), [ids[0], ids[2]], "limit 2 offset 0");
  assert.deepEqual(page2.map((x) => x.thread_id), [ids[1]], "limit 2 offset 2");

  const idle = await c.threads.search({ metadata: { tag }, status: "idle" });
  assert.equal(idle.length, 3, "status idle filter");
  const busy = await c.threads.search({ metadata: { tag }, status: "busy" });
  assert.equal(busy.length, 0, "status busy filter");
});

test("getState after a run: LangChain messages; getHistory; copy", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q1 = unique("first question");
  await c.runs.wait(th.thread_id, ASSISTANT, { input: input(q1), signal: AbortSignal.timeout(STREAM_MS) });
  const q2 = unique("second question");
  await c.runs.wait(th.thread_id, ASSISTANT, { input: input(q2), signal: AbortSignal.timeout(STREAM_MS) });

  const state = await c.threads.getState(th.thread_id);
  const msgs = state.values?.messages;
  assert.ok(Array.isArray(msgs), `state.values.messages in ${short(state, 800)}`);
  assert.deepEqual(
    msgs.map((m) => [kindOf(m), textOf(m.content)]),
    [["human", q1], ["ai", "echo: " + q1], ["human", q2], ["ai", "echo: " + q2]],
    "the thread's messages",
  );
  for (const m of msgs) {
    assert.ok(["human", "ai"].includes(m.type), `message type is LangChain's (human/ai): ${short(m)}`);
    assert.equal(typeof m.id, "string", `message id: ${short(m)}`);
  }
  assert.equal(new Set(msgs.map((m) => m.id)).size, msgs.length, "message ids are distinct");
  assert.ok(Array.isArray(state.next) && state.next.length === 0, `next after a finished run: ${short(state.next)}`);
  assert.equal(typeof state.checkpoint?.checkpoint_id, "string", `state.checkpoint: ${short(state.checkpoint)}`);

  // The thread itself carries the values too.
  const got = await c.threads.get(th.thread_id);
  assert.equal(got.status, "idle", `status after the runs: ${got.status}`);
  assert.equal(got.values?.messages?.length, 4, `thread.values: ${short(got.values, 600)}`);

  const history = await c.threads.getHistory(th.thread_id);
  assert.ok(Array.isArray(history), `getHistory returned ${short(history, 600)}`);
  const shape = history.map((h) => `${h.checkpoint?.checkpoint_id}: ${h.values?.messages?.length ?? "no"} messages`);
  assert.ok(history.length >= 2, `want a checkpoint per run at least (2 runs), got ${history.length}:\n  ${shape.join("\n  ")}`);
  assert.equal(history[0].checkpoint?.checkpoint_id, state.checkpoint.checkpoint_id, "history[0] is the current state");
  const counts = history.map((h) => h.values?.messages?.length ?? 0);
  assert.deepEqual([...counts].sort((a, b) => b - a), counts, `history is newest first (message counts ${counts})`);
  assert.ok(counts.includes(2), `a checkpoint after the first run (2 messages) is in the history: counts ${counts}`);
  const limited = await c.threads.getHistory(th.thread_id, { limit: 1 });
  assert.equal(limited.length, 1, "getHistory limit 1");

  const copy = await c.threads.copy(th.thread_id);
  assert.notEqual(copy.thread_id, th.thread_id, "the copy has its own id");
  const copied = await c.threads.getState(copy.thread_id);
  assert.deepEqual(
    copied.values?.messages?.map((m) => textOf(m.content)),
    msgs.map((m) => textOf(m.content)),
    "the copy has the messages",
  );
  // The copy goes on by itself.
  const q3 = unique("on the copy");
  await c.runs.wait(copy.thread_id, ASSISTANT, { input: input(q3), signal: AbortSignal.timeout(STREAM_MS) });
  assert.equal((await c.threads.getState(copy.thread_id)).values.messages.length, 6, "a run on the copy");
  assert.equal((await c.threads.getState(th.thread_id)).values.messages.length, 4, "the original is unchanged");
});

test("updateState adds a message; the next run sees it", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q1 = unique("before");
  await c.runs.wait(th.thread_id, ASSISTANT, { input: input(q1), signal: AbortSignal.timeout(STREAM_MS) });
  const before = await c.threads.getState(th.thread_id);

  const note = unique("a note added by updateState");
  const res = await c.threads.updateState(th.thread_id, {
    values: { messages: [{ type: "ai", content: note }] },
  });
  assert.equal(typeof res?.checkpoint?.checkpoint_id, "string", `updateState returns the new checkpoint: ${short(res)}`);
  const after = await c.threads.getState(th.thread_id);
  assert.notEqual(after.checkpoint.checkpoint_id, before.checkpoint.checkpoint_id, "a new checkpoint");
  assert.deepEqual(
    after.values.messages.map((m) => [kindOf(m), textOf(m.content)]),
    [["human", q1], ["ai", "echo: " + q1], ["ai", note]],
    "messages after updateState (appended by the messages reducer)",
  );
  const history = await c.threads.getHistory(th.thread_id);
  assert.equal(history[0].checkpoint.checkpoint_id, after.checkpoint.checkpoint_id, "updateState's checkpoint heads the history");

  const q2 = unique("after");
  const values = await c.runs.wait(th.thread_id, ASSISTANT, { input: input(q2), signal: AbortSignal.timeout(STREAM_MS) });
  assertAnswer(values.messages, q2, "echo: " + q2, "run after updateState");
  assert.ok(values.messages.some((m) => textOf(m.content) === note), "the note stays in the thread");
});

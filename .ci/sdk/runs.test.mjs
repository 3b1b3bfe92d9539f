// Runs without streaming: create (a Run, onRunCreated), get, list, join,
// wait (final values), thread-less wait, delete, and both message input
// forms.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ASSISTANT, STREAM_MS, assertAnswer, client, finished, input, newThread, rejectsWithStatus, short, textOf, unique, waitRun,
} from "./helpers.mjs";

test("runs.create returns a Run; get, join, list", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q = unique("create me");
  let created;
  const run = await c.runs.create(th.thread_id, ASSISTANT, {
    input: input(q),
    metadata: { from: "sdk" },
    onRunCreated: (m) => (created = m),
  });
  assert.equal(typeof run.run_id, "string", `runs.create returned ${short(run)}`);
  assert.equal(run.thread_id, th.thread_id, "run.thread_id");
  assert.ok(["pending", "running", "success"].includes(run.status), `a new run's status: ${run.status}`);
  assert.equal(typeof run.assistant_id, "string", `run.assistant_id in ${short(run)}`);
  assert.equal(typeof run.created_at, "string", `run.created_at in ${short(run)}`);
  assert.deepEqual(created, { run_id: run.run_id, thread_id: th.thread_id }, "onRunCreated (from Content-Location)");

  const values = await c.runs.join(th.thread_id, run.run_id, { signal: AbortSignal.timeout(STREAM_MS) });
  assertAnswer(values?.messages, q, "echo: " + q, "runs.join's values");

  const got = await c.runs.get(th.thread_id, run.run_id);
  assert.equal(got.status, "success", `run after join: ${short(got)}`);
  assert.equal(got.run_id, run.run_id);
  assert.equal(got.metadata?.from, "sdk", `run metadata: ${short(got.metadata)}`);

  const q2 = unique("second run");
  const run2 = await c.runs.create(th.thread_id, ASSISTANT, { input: input(q2) });
  await c.runs.join(th.thread_id, run2.run_id, { signal: AbortSignal.timeout(STREAM_MS) });
  const list = await c.runs.list(th.thread_id);
  assert.deepEqual(new Set(list.map((r) => r.run_id)), new Set([run.run_id, run2.run_id]), "runs.list has both runs");
  assert.equal(list.length, 2, `runs.list: ${short(list, 800)}`);
  assert.ok(list.every((r) => r.status === "success" && r.thread_id === th.thread_id), `runs: ${short(list, 800)}`);
  // limit and offset page through the same list.
  const limited = await c.runs.list(th.thread_id, { limit: 1 });
  const offset = await c.runs.list(th.thread_id, { limit: 1, offset: 1 });
  assert.deepEqual(
    [...limited, ...offset].map((r) => r.run_id),
    list.map((r) => r.run_id),
    "runs.list limit 1, then offset 1, is the whole list",
  );
  const byStatus = await c.runs.list(th.thread_id, { status: "success" });
  assert.equal(byStatus.length, 2, "runs.list status success");

  await rejectsWithStatus(() => c.runs.get(th.thread_id, "00000000-0000-4000-8000-000000000000"), [404], "runs.get of an unknown run");
});

test("runs.wait returns the final values", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q = unique("wait for me");
  let created;
  const values = await c.runs.wait(th.thread_id, ASSISTANT, {
    input: input(q),
    onRunCreated: (m) => (created = m),
    signal: AbortSignal.timeout(STREAM_MS),
  });
  assert.ok(!("__error__" in (values ?? {})), `wait returned an error: ${short(values)}`);
  const ai = assertAnswer(values?.messages, q, "echo: " + q, "runs.wait's values");
  assert.equal(ai.type, "ai", `the answer's type: ${short(ai)}`);
  assert.equal(typeof created?.run_id, "string", "onRunCreated is called for runs.wait (Content-Location)");
  const run = await c.runs.get(th.thread_id, created.run_id);
  assert.equal(run.status, "success");
});

test("thread-less runs.wait(null, ...)", { timeout: 20_000 }, async () => {
  const c = client();
  const q = unique("no thread");
  const values = await c.runs.wait(null, ASSISTANT, { input: input(q), signal: AbortSignal.timeout(STREAM_MS) });
  assertAnswer(values?.messages, q, "echo: " + q, "thread-less wait");
});

test("input messages as LangChain dicts with content blocks", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q = unique("typed human");
  // What LangGraph's React useStream sends: type "human" and an array of
  // content blocks.
  const values = await c.runs.wait(th.thread_id, ASSISTANT, {
    input: { messages: [{ type: "human", content: [{ type: "text", text: q }] }] },
    signal: AbortSignal.timeout(STREAM_MS),
  });
  const ai = values?.messages?.at(-1);
  assert.equal(textOf(ai?.content), "echo: " + q, `answer to content blocks: ${short(values, 800)}`);
  const q2 = unique("typed string");
  const v2 = await c.runs.wait(th.thread_id, ASSISTANT, {
    input: { messages: [{ type: "human", content: q2 }] },
    signal: AbortSignal.timeout(STREAM_MS),
  });
  assertAnswer(v2?.messages, q2, "echo: " + q2, "type human, string content");
});

test("runs.delete removes a finished run", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const run = await c.runs.create(th.thread_id, ASSISTANT, { input: input(unique("to delete")) });
  await waitRun(c, th.thread_id, run.run_id, finished, "run to delete");
  await c.runs.delete(th.thread_id, run.run_id);
  await rejectsWithStatus(() => c.runs.get(th.thread_id, run.run_id), [404], "runs.get after runs.delete");
});

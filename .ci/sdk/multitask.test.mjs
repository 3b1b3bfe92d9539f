// Cancellation and double-texting (multitaskStrategy) on one thread. A
// "hold ..." input makes the fake model never answer, so the run stays
// running until it is cancelled or interrupted.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ASSISTANT, STREAM_MS, assertAnswer, checkRunStream, client, collect, finished, input, kindOf, newThread,
  rejectsWithStatus, short, summary, textOf, unique, waitRun,
} from "./helpers.mjs";

const running = (s) => s === "running";

// holdRun starts a run that stays running, and waits until it is.
async function holdRun(c, threadId) {
  const q = unique("hold");
  const run = await c.runs.create(threadId, ASSISTANT, { input: input(q) });
  await waitRun(c, threadId, run.run_id, running, "the held run");
  return { run, q };
}

test("runs.cancel with wait interrupts a running run", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const { run } = await holdRun(c, th.thread_id);
  const busy = await c.threads.get(th.thread_id);
  assert.equal(busy.status, "busy", `the thread while a run runs: ${short(busy)}`);
  await c.runs.cancel(th.thread_id, run.run_id, true);
  const got = await c.runs.get(th.thread_id, run.run_id);
  assert.equal(got.status, "interrupted", `after cancel(wait) the run is ${short(got)}`);
  const idle = await c.threads.get(th.thread_id);
  assert.notEqual(idle.status, "busy", "the thread is not busy after the cancel");
  // The thread goes on.
  const q = unique("after the cancel");
  const values = await c.runs.wait(th.thread_id, ASSISTANT, { input: input(q), signal: AbortSignal.timeout(STREAM_MS) });
  assertAnswer(values.messages, q, "echo: " + q, "a run after the cancel");
});

test('aborting a stream with onDisconnect "cancel" cancels the run', { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const ctl = new AbortController();
  const events = await collect(
    (signal) =>
      c.runs.stream(th.thread_id, ASSISTANT, {
        input: input(unique("hold")),
        streamMode: "values",
        onDisconnect: "cancel",
        signal,
      }),
    { signal: ctl.signal, onEvent: (ev) => (ev.event === "metadata" ? (ctl.abort(), false) : true) },
  );
  const runId = events[0]?.data?.run_id;
  assert.ok(runId, `no metadata event before the abort:\n${summary(events)}`);
  const run = await waitRun(c, th.thread_id, runId, finished, "the run whose stream was aborted");
  assert.equal(run.status, "interrupted", `after the disconnect the run is ${short(run)}`);
});

test('multitaskStrategy "reject": a second run is a 409', { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const { run } = await holdRun(c, th.thread_id);
  await rejectsWithStatus(
    () => c.runs.create(th.thread_id, ASSISTANT, { input: input(unique("second")), multitaskStrategy: "reject" }),
    [409],
    "runs.create reject while a run runs",
  );
  await rejectsWithStatus(
    () => collect((signal) => c.runs.stream(th.thread_id, ASSISTANT, { input: input(unique("second")), multitaskStrategy: "reject", signal })),
    [409],
    "runs.stream reject while a run runs",
  );
  assert.equal((await c.runs.get(th.thread_id, run.run_id)).status, "running", "the first run is not disturbed");
  assert.equal((await c.runs.list(th.thread_id)).length, 1, "the rejected runs are not stored");
  await c.runs.cancel(th.thread_id, run.run_id, true);
});

test('multitaskStrategy "enqueue": both runs finish, in order', { timeout: 25_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q1 = unique("slow first");
  const run1 = await c.runs.create(th.thread_id, ASSISTANT, { input: input(q1) });
  await waitRun(c, th.thread_id, run1.run_id, (s) => s !== "pending", "the first run starts");
  const q2 = unique("queued second");
  const run2 = await c.runs.create(th.thread_id, ASSISTANT, { input: input(q2), multitaskStrategy: "enqueue" });
  assert.equal(run2.multitask_strategy ?? "enqueue", "enqueue", `run2: ${short(run2)}`);
  const mid = await c.runs.get(th.thread_id, run2.run_id);
  assert.ok(["pending", "success"].includes(mid.status), `the queued run waits (pending): ${short(mid)}`);
  const values = await c.runs.join(th.thread_id, run2.run_id, { signal: AbortSignal.timeout(STREAM_MS) });
  assert.deepEqual(
    values.messages.map((m) => [kindOf(m), textOf(m.content)]),
    [["human", q1], ["ai", "echo: " + q1], ["human", q2], ["ai", "echo: " + q2]],
    "the queued run ran after the first",
  );
  assert.equal((await c.runs.get(th.thread_id, run1.run_id)).status, "success");
  assert.equal((await c.runs.get(th.thread_id, run2.run_id)).status, "success");
});

test('multitaskStrategy "interrupt": the first run is interrupted, the second answers', { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const { run, q: held } = await holdRun(c, th.thread_id);
  const q2 = unique("interrupting");
  const events = await collect((signal) =>
    c.runs.stream(th.thread_id, ASSISTANT, { input: input(q2), multitaskStrategy: "interrupt", streamMode: "values", signal }),
  );
  checkRunStream(events, "the interrupting run");
  const msgs = events.findLast((e) => e.event === "values")?.data?.messages;
  assertAnswer(msgs, q2, "echo: " + q2, "the interrupting run's values");
  const first = await waitRun(c, th.thread_id, run.run_id, finished, "the interrupted run");
  assert.equal(first.status, "interrupted", `the first run: ${short(first)}`);
  // Interrupt keeps what the first run had (its input) in the thread.
  assert.ok(msgs.some((m) => textOf(m.content) === held), `the interrupted run's input stays: ${short(msgs, 800)}`);
});

test('multitaskStrategy "rollback": the first run is deleted, with its input', { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const { run, q: held } = await holdRun(c, th.thread_id);
  const q2 = unique("rolling back");
  const values = await c.runs.wait(th.thread_id, ASSISTANT, {
    input: input(q2),
    multitaskStrategy: "rollback",
    signal: AbortSignal.timeout(STREAM_MS),
  });
  assert.deepEqual(
    values.messages.map((m) => [kindOf(m), textOf(m.content)]),
    [["human", q2], ["ai", "echo: " + q2]],
    `the rolled back run leaves nothing (it had ${held})`,
  );
  await rejectsWithStatus(() => c.runs.get(th.thread_id, run.run_id), [404], "the rolled back run");
});

test("runs.cancel of an unknown or finished run", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  await rejectsWithStatus(
    () => c.runs.cancel(th.thread_id, "00000000-0000-4000-8000-000000000000"),
    [404],
    "cancel of an unknown run",
  );
  const run = await c.runs.create(th.thread_id, ASSISTANT, { input: input(unique("done")) });
  await c.runs.join(th.thread_id, run.run_id, { signal: AbortSignal.timeout(STREAM_MS) });
  try {
    await c.runs.cancel(th.thread_id, run.run_id);
  } catch (e) {
    assert.ok(e.status >= 400 && e.status < 500, `cancel of a finished run: ${e.stack ?? e}`);
  }
  assert.equal((await c.runs.get(th.thread_id, run.run_id)).status, "success", "cancel does not change a finished run");
});

// runs.stream in each stream mode, several at once, thread-less, and
// joinStream resuming from a Last-Event-ID.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ASSISTANT, assertAnswer, checkRunStream, client, collect, finished, input, kindOf, lastValues, newThread,
  rejectsWithStatus, short, summary, textOf, unique, waitRun,
} from "./helpers.mjs";

// streamRun streams one run on a new thread and returns its events, the
// question, the thread and what onRunCreated got.
async function streamRun(t, streamMode, text = "stream me", extra = {}) {
  const c = client();
  const th = await newThread(c, t);
  const q = unique(text);
  let created;
  const events = await collect((signal) =>
    c.runs.stream(th.thread_id, ASSISTANT, {
      input: input(q),
      streamMode,
      signal,
      onRunCreated: (m) => (created = m),
      ...extra,
    }),
  );
  const runId = checkRunStream(events, `streamMode ${JSON.stringify(streamMode)}`);
  assert.equal(created?.run_id, runId, "onRunCreated's run_id (Content-Location) is the metadata's");
  assert.equal(created?.thread_id, th.thread_id, "onRunCreated's thread_id");
  return { c, events, q, th, runId };
}

// tokens are the "messages" (messages-tuple) events' AI chunks.
function tokens(events) {
  return events
    .filter((e) => e.event === "messages")
    .map((e) => {
      assert.ok(Array.isArray(e.data) && e.data.length === 2, `a messages-tuple event is [chunk, metadata]: ${short(e.data)}`);
      return e.data;
    })
    .filter(([chunk]) => kindOf(chunk) === "ai");
}

test('streamMode "values"', { timeout: 20_000 }, async (t) => {
  const { events, q } = await streamRun(t, "values");
  const values = events.filter((e) => e.event === "values");
  assert.ok(values.length >= 2, `values events (the input, then the answer):\n${summary(events)}`);
  assert.deepEqual(
    values[0].data.messages?.map((m) => [kindOf(m), textOf(m.content)]),
    [["human", q]],
    `the first values event is the input state:\n${summary(values)}`,
  );
  assertAnswer(lastValues(events).messages, q, "echo: " + q, "the last values event");
  const other = events.filter((e) => !["metadata", "values", "end"].includes(e.event));
  assert.deepEqual(other, [], "only values events in values mode");
});

test("no streamMode streams values (the default)", { timeout: 20_000 }, async (t) => {
  const { events, q } = await streamRun(t, undefined);
  assertAnswer(lastValues(events).messages, q, "echo: " + q, "default stream mode");
});

test('streamMode "updates"', { timeout: 20_000 }, async (t) => {
  const { events, q } = await streamRun(t, "updates");
  const updates = events.filter((e) => e.event === "updates");
  assert.ok(updates.length >= 1, `no updates events:\n${summary(events)}`);
  for (const u of updates) {
    assert.ok(u.data && typeof u.data === "object" && !Array.isArray(u.data), `an update is {node: update}: ${short(u.data)}`);
  }
  const msgs = updates.flatMap((u) => Object.values(u.data).flatMap((v) => (Array.isArray(v?.messages) ? v.messages : [])));
  assert.ok(
    msgs.some((m) => kindOf(m) === "ai" && textOf(m.content) === "echo: " + q),
    `no node update with the AI answer:\n${summary(updates, 600)}`,
  );
});

test('streamMode "messages-tuple" streams tokens', { timeout: 20_000 }, async (t) => {
  const { events, q } = await streamRun(t, "messages-tuple");
  const chunks = tokens(events);
  assert.ok(chunks.length >= 2, `want several AI token chunks (the fake model streams in pieces):\n${summary(events)}`);
  for (const [chunk, meta] of chunks) {
    assert.equal(typeof chunk.id, "string", `a chunk has the message id: ${short(chunk)}`);
    assert.ok(meta && typeof meta === "object", `a chunk's metadata: ${short(meta)}`);
  }
  const ids = new Set(chunks.map(([chunk]) => chunk.id));
  assert.equal(ids.size, 1, `the answer's chunks share one message id: ${[...ids]}`);
  assert.equal(chunks.map(([chunk]) => textOf(chunk.content)).join(""), "echo: " + q, "the chunks concatenate to the answer");
  const other = events.filter((e) => !["metadata", "messages", "end"].includes(e.event));
  assert.deepEqual(other, [], "only messages events in messages-tuple mode");
});

test('streamMode "custom" on a plain run', { timeout: 20_000 }, async (t) => {
  const { events } = await streamRun(t, "custom");
  const other = events.filter((e) => !["metadata", "custom", "end"].includes(e.event));
  assert.deepEqual(other, [], `only custom events in custom mode:\n${summary(events)}`);
});

test("several stream modes at once", { timeout: 20_000 }, async (t) => {
  const { events, q } = await streamRun(t, ["values", "updates", "messages-tuple", "custom"]);
  const kinds = new Set(events.map((e) => e.event));
  for (const k of ["values", "updates", "messages"]) {
    assert.ok(kinds.has(k), `no ${k} events with several modes:\n${summary(events)}`);
  }
  assertAnswer(lastValues(events).messages, q, "echo: " + q, "values with several modes");
  assert.equal(tokens(events).map(([c]) => textOf(c.content)).join(""), "echo: " + q, "tokens with several modes");
  // The values event with the answer comes after its tokens.
  const lastToken = events.findLastIndex((e) => e.event === "messages");
  const lastValuesAt = events.findLastIndex((e) => e.event === "values");
  assert.ok(lastToken < lastValuesAt, `tokens come before the final values:\n${summary(events)}`);
});

test('streamMode "events" (if supported)', { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q = unique("events");
  let events;
  try {
    events = await collect((signal) => c.runs.stream(th.thread_id, ASSISTANT, { input: input(q), streamMode: "events", signal }));
  } catch (e) {
    if (e.status >= 400 && e.status < 500) {
      t.skip(`"events" mode refused with HTTP ${e.status}: ${short(e.text, 200)}`);
      return;
    }
    throw e;
  }
  checkRunStream(events, "events mode");
  const evs = events.filter((e) => e.event === "events");
  assert.ok(evs.length > 0, `no events events:\n${summary(events)}`);
  assert.ok(evs.every((e) => typeof e.data?.event === "string" && e.data.event.startsWith("on_")), `events are on_*:\n${summary(evs)}`);
  const streamed = evs.filter((e) => e.data.event === "on_chat_model_stream").map((e) => textOf(e.data.data?.chunk?.content));
  assert.equal(streamed.join(""), "echo: " + q, `on_chat_model_stream chunks:\n${summary(evs)}`);
});

test("other documented stream modes are served or refused with a 4xx", { timeout: 30_000 }, async (t) => {
  const c = client();
  for (const mode of ["messages", "debug", "tasks", "checkpoints"]) {
    await t.test(mode, async (t) => {
      const th = await newThread(c, t);
      let events;
      try {
        events = await collect((signal) => c.runs.stream(th.thread_id, ASSISTANT, { input: input(unique(mode)), streamMode: mode, signal }));
      } catch (e) {
        assert.ok(e.status >= 400 && e.status < 500, `stream mode ${mode}: neither served nor refused with a 4xx: ${e.stack ?? e}`);
        t.skip(`refused with HTTP ${e.status}`);
        return;
      }
      checkRunStream(events, `${mode} mode`);
    });
  }
});

test("thread-less runs.stream(null, ...)", { timeout: 20_000 }, async () => {
  const c = client();
  const q = unique("stateless stream");
  let created;
  const events = await collect((signal) =>
    c.runs.stream(null, ASSISTANT, { input: input(q), streamMode: ["values", "messages-tuple"], signal, onRunCreated: (m) => (created = m) }),
  );
  const runId = checkRunStream(events, "thread-less stream");
  assertAnswer(lastValues(events).messages, q, "echo: " + q, "thread-less stream");
  assert.equal(created?.run_id, runId, "onRunCreated for a thread-less stream");
});

test("joinStream with lastEventId resumes a live run without duplicates", { timeout: 30_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q = unique("slow resumable");
  const ctl = new AbortController();
  // Read the first few events, then drop the connection (the run goes on:
  // onDisconnect "continue"), then join from the last id seen.
  const first = await collect(
    (signal) =>
      c.runs.stream(th.thread_id, ASSISTANT, {
        input: input(q),
        streamMode: ["values", "messages-tuple"],
        streamResumable: true,
        onDisconnect: "continue",
        signal,
      }),
    { signal: ctl.signal, onEvent: (ev, evs) => (evs.filter((e) => e.event === "messages").length >= 2 ? (ctl.abort(), false) : true) },
  );
  const runId = first[0]?.data?.run_id;
  assert.ok(runId, `no metadata before the disconnect:\n${summary(first)}`);
  const lastId = first.findLast((e) => e.id)?.id;
  assert.ok(lastId, `the stream's events carry no ids (needed to resume):\n${summary(first)}`);

  const rest = await collect((signal) =>
    c.runs.joinStream(th.thread_id, runId, { lastEventId: lastId, streamMode: ["values", "messages-tuple"], signal }),
  );
  const errors = rest.filter((e) => e.event === "error");
  assert.deepEqual(errors, [], `errors on resume:\n${summary(rest)}`);
  const seen = new Set(first.map((e) => e.id).filter(Boolean));
  const dup = rest.filter((e) => e.id && seen.has(e.id));
  assert.deepEqual(dup, [], `events sent again after Last-Event-ID ${lastId}:\n${summary(dup)}`);
  const all = [...first, ...rest];
  const text = tokens(all).map(([chunk]) => textOf(chunk.content)).join("");
  assert.equal(text, "echo: " + q, `the tokens before and after the resume make the answer once:\nbefore:\n${summary(first)}\nafter:\n${summary(rest)}`);
  assertAnswer(lastValues(rest).messages, q, "echo: " + q, "the resumed stream's last values");
  const run = await waitRun(c, th.thread_id, runId, finished, "resumed run");
  assert.equal(run.status, "success");
});

test("joinStream after the run replays from lastEventId", { timeout: 20_000 }, async (t) => {
  const { c, events, th, runId } = await streamRun(t, ["values", "messages-tuple"], "replay", { streamResumable: true });
  const withIds = events.filter((e) => e.id);
  assert.ok(withIds.length >= 3, `too few events with ids to test a replay:\n${summary(events)}`);
  const k = Math.floor(withIds.length / 2);
  const rest = await collect((signal) =>
    c.runs.joinStream(th.thread_id, runId, { lastEventId: withIds[k].id, streamMode: ["values", "messages-tuple"], signal }),
  );
  const want = withIds.slice(k + 1).filter((e) => e.event !== "end").map((e) => `${e.event} ${e.id}`);
  const got = rest.filter((e) => e.id && e.event !== "end" && e.event !== "metadata").map((e) => `${e.event} ${e.id}`);
  assert.deepEqual(got, want.filter((w) => !w.startsWith("metadata ")), `replay after id ${withIds[k].id}:\n${summary(rest)}`);
});

test("unknown stream mode is refused with a 4xx", { timeout: 10_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  await rejectsWithStatus(
    () => collect((signal) => c.runs.stream(th.thread_id, ASSISTANT, { input: input("x"), streamMode: "bogus-mode", signal })),
    [400, 422],
    "streamMode bogus-mode",
  );
  const runs = await c.runs.list(th.thread_id);
  assert.deepEqual(runs, [], "a refused stream leaves no run");
});

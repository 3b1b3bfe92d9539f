// Bad requests: the SDK throws an HTTP error with a 4xx status, never a
// 500, and no run is left behind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ASSISTANT, client, collect, input, newThread, rejectsWithStatus } from "./helpers.mjs";

test("an unknown assistant id", { timeout: 10_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  await rejectsWithStatus(() => c.runs.create(th.thread_id, "no-such-assistant", { input: input("x") }), [404, 422, 400], "runs.create");
  await rejectsWithStatus(
    () => collect((signal) => c.runs.stream(th.thread_id, "no-such-assistant", { input: input("x"), signal })),
    [404, 422, 400],
    "runs.stream",
  );
  await rejectsWithStatus(() => c.runs.wait(null, "no-such-assistant", { input: input("x") }), [404, 422, 400], "thread-less runs.wait");
  assert.deepEqual(await c.runs.list(th.thread_id), [], "no run is stored");
});

test("an unknown thread", { timeout: 10_000 }, async () => {
  const c = client();
  const id = randomUUID();
  await rejectsWithStatus(() => c.runs.create(id, ASSISTANT, { input: input("x") }), [404], "runs.create on an unknown thread");
  await rejectsWithStatus(() => c.runs.list(id), [404], "runs.list of an unknown thread");
  await rejectsWithStatus(() => c.threads.getState(id), [404], "getState of an unknown thread");
  await rejectsWithStatus(() => c.threads.getHistory(id), [404], "getHistory of an unknown thread");
});

test("malformed input", { timeout: 10_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const bad = [
    ["input is a string", "hello"],
    ["messages is not a list", { messages: "hello" }],
    ["a message without content", { messages: [{ role: "user" }] }],
    ["a message of an unknown type", { messages: [{ type: "martian", content: "hi" }] }],
  ];
  for (const [what, value] of bad) {
    await rejectsWithStatus(() => c.runs.create(th.thread_id, ASSISTANT, { input: value }), [400, 422], `runs.create: ${what}`);
  }
  await rejectsWithStatus(
    () => c.runs.create(th.thread_id, ASSISTANT, { input: input("x"), multitaskStrategy: "sometimes" }),
    [400, 422],
    "an unknown multitaskStrategy",
  );
  assert.deepEqual(await c.runs.list(th.thread_id), [], "no run is stored");
});

test("malformed JSON bodies", { timeout: 10_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  // Below the SDK: a body that is not JSON at all, as a broken client
  // might send through the SDK's onRequest hook.
  const raw = client({
    onRequest: (url, init) => ({ ...init, body: "{not json" }),
  });
  await rejectsWithStatus(() => raw.runs.create(th.thread_id, ASSISTANT, { input: input("x") }), [400, 422], "runs.create with a broken body");
  await rejectsWithStatus(() => raw.threads.search({}), [400, 422], "threads.search with a broken body");
});

// A run that uses a tool, and one that delegates to a subagent (the task
// tool): the tool call and its result show in values and messages, the
// subagent's progress in custom events.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ASSISTANT, checkRunStream, client, collect, kindOf, input, lastValues, newThread, short, summary, textOf, unique,
} from "./helpers.mjs";

// toolExchange finds the AI message calling tool and the tool message
// answering it in messages.
function toolExchange(messages, tool, what) {
  const call = messages.find((m) => kindOf(m) === "ai" && m.tool_calls?.some((tc) => tc.name === tool));
  assert.ok(call, `${what}: no AI message with a ${tool} tool call in ${short(messages, 1500)}`);
  const tc = call.tool_calls.find((x) => x.name === tool);
  assert.equal(typeof tc.id, "string", `${what}: tool call id: ${short(tc)}`);
  assert.ok(tc.args && typeof tc.args === "object", `${what}: tool call args are an object (LangChain's parsed args): ${short(tc)}`);
  const result = messages.find((m) => kindOf(m) === "tool" && m.tool_call_id === tc.id);
  assert.ok(result, `${what}: no tool message with tool_call_id ${tc.id} in ${short(messages, 1500)}`);
  return { call, tc, result };
}

test("a run using a tool: the call and its result in values and messages", { timeout: 20_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q = unique("use a tool");
  const events = await collect((signal) =>
    c.runs.stream(th.thread_id, ASSISTANT, { input: input(q), streamMode: ["values", "messages-tuple", "updates"], signal }),
  );
  checkRunStream(events, "tool run");
  const msgs = lastValues(events).messages;
  const { tc, result } = toolExchange(msgs, "ls", "the last values");
  assert.equal(tc.args.path, "/mnt/user-data", `ls args: ${short(tc.args)}`);
  assert.equal(result.name ?? "ls", "ls", `the tool message's name: ${short(result)}`);
  assert.equal(kindOf(msgs.at(-1)), "ai");
  assert.equal(textOf(msgs.at(-1).content), "tool done: " + q, "the answer after the tool");

  // messages-tuple: the tool call streams as AI chunks with tool_call_chunks
  // or tool_calls, and the tool's result comes as a tool message.
  const tuples = events.filter((e) => e.event === "messages").map((e) => e.data[0]);
  assert.ok(
    tuples.some((m) => kindOf(m) === "ai" && [...(m.tool_call_chunks ?? []), ...(m.tool_calls ?? [])].some((x) => x.name === "ls")),
    `no AI chunk with the ls tool call in messages-tuple:\n${summary(events.filter((e) => e.event === "messages"))}`,
  );
  assert.ok(
    tuples.some((m) => kindOf(m) === "tool" && m.tool_call_id === tc.id),
    `no tool message in messages-tuple:\n${summary(events.filter((e) => e.event === "messages"))}`,
  );
  const state = await c.threads.getState(th.thread_id);
  toolExchange(state.values.messages, "ls", "getState");
});

test("a run delegating to a subagent: progress in custom events", { timeout: 25_000 }, async (t) => {
  const c = client();
  const th = await newThread(c, t);
  const q = unique("delegate");
  const events = await collect(
    (signal) => c.runs.stream(th.thread_id, ASSISTANT, { input: input(q), streamMode: ["values", "custom"], signal }),
    { ms: 20_000 },
  );
  checkRunStream(events, "subagent run");
  const msgs = lastValues(events).messages;
  const { tc, result } = toolExchange(msgs, "task", "the last values");
  assert.equal(tc.args.description, "Count the apples", `task args: ${short(tc.args)}`);
  assert.match(textOf(result.content), /subagent report/, `the task's result carries the subagent's answer: ${short(result)}`);
  assert.equal(textOf(msgs.at(-1).content), "delegated: " + q, "the lead's answer");

  const custom = events.filter((e) => e.event === "custom");
  assert.ok(custom.length >= 2, `want the subagent's progress (start, end) as custom events:\n${summary(events)}`);
  const mentions = custom.filter((e) => {
    const s = JSON.stringify(e.data);
    return s.includes(tc.id) || s.includes("Count the apples");
  });
  assert.ok(mentions.length >= 1, `no custom event names the task (its tool call id ${tc.id} or description):\n${summary(custom, 400)}`);
  // The progress comes while the task runs: before the values event with
  // the task's result.
  const resultAt = events.findIndex((e) => e.event === "values" && e.data?.messages?.some((m) => m.tool_call_id === tc.id));
  const firstCustom = events.findIndex((e) => e.event === "custom");
  assert.ok(firstCustom < resultAt, `custom progress before the task's result:\n${summary(events)}`);
});

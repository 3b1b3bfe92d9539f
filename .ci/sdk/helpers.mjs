// Shared helpers for the LangGraph SDK suite. The suite is written from the
// SDK's and LangGraph Server's documented behaviour, not from deerflow's
// server code: it talks to a running `deerflow serve` (DEERFLOW_URL, the
// API base ending in /api; DEERFLOW_TOKEN, http.api_token) whose model is
// the fake scripted by cmd/deerflow/sdk_test.go:
//
//   "hold ..."        the model never answers (until the run is cancelled)
//   "slow ..."        "echo: <text>", streamed slowly (about 2 s)
//   "use a tool ..."  an ls tool call, then "tool done: <text>"
//   "delegate ..."    a task (subagent) call; the subagent lists a folder
//                     and answers "subagent report"; then "delegated: <text>"
//   anything else     "echo: <text>", in several chunks
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";

export const API_URL = process.env.DEERFLOW_URL;
export const TOKEN = process.env.DEERFLOW_TOKEN;
export const ASSISTANT = process.env.DEERFLOW_ASSISTANT || "lead_agent";

if (!API_URL || !TOKEN) {
  throw new Error("DEERFLOW_URL and DEERFLOW_TOKEN must be set (cmd/deerflow/sdk_test.go sets them)");
}

// How long one stream, wait or join may take before the test gives up: the
// fake model answers in milliseconds, so this is a bound, not a timing
// assertion.
export const STREAM_MS = 15_000;

// client is an SDK Client for the server. Retries are off: on loopback a
// 5xx or a dropped connection is a failure to report, not to wait out.
export function client(overrides = {}) {
  return new Client({
    apiUrl: API_URL,
    apiKey: TOKEN,
    timeoutMs: 10_000,
    callerOptions: { maxRetries: 0 },
    ...overrides,
  });
}

// unique makes test inputs distinct, so that answers can't be confused.
export function unique(prefix) {
  return `${prefix} ${randomUUID().slice(0, 8)}`;
}

// input is a run input with one user message, in LangChain's role form.
export function input(text) {
  return { messages: [{ role: "user", content: text }] };
}

// textOf is the text of a LangChain message content: a string or an array
// of content blocks.
export function textOf(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === "string" ? b : b?.type === "text" || b?.text != null ? (b.text ?? "") : ""))
      .join("");
  }
  return "";
}

// kindOf is a message's kind, "human"/"ai"/"tool"/"system", whether it is
// serialized with type (LangChain) or role (OpenAI style).
export function kindOf(m) {
  const t = m?.type ?? m?.role;
  return (
    {
      user: "human",
      assistant: "ai",
      AIMessageChunk: "ai",
      HumanMessageChunk: "human",
      ToolMessageChunk: "tool",
    }[t] ?? t
  );
}

// short renders a value for a failure message, cut to n characters.
export function short(v, n = 400) {
  let s;
  try {
    s = typeof v === "string" ? v : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  if (s === undefined) s = String(v);
  return s.length > n ? s.slice(0, n) + `…(${s.length} chars)` : s;
}

// summary renders a list of stream events: one line each, event name and
// data cut short.
export function summary(events, n = 160) {
  if (events.length === 0) return "(no events)";
  return events.map((e, i) => `  #${i} ${e.event}${e.id ? ` id=${e.id}` : ""}: ${short(e.data, n)}`).join("\n");
}

// collect reads a stream to its end, bounded by ms. It throws (with the
// events so far) when the bound is reached or the stream fails.
export async function collect(makeStream, { ms = STREAM_MS, signal, onEvent } = {}) {
  const bound = AbortSignal.timeout(ms);
  const merged = signal ? AbortSignal.any([bound, signal]) : bound;
  const events = [];
  try {
    for await (const ev of makeStream(merged)) {
      events.push(ev);
      if (onEvent && (await onEvent(ev, events)) === false) break;
    }
  } catch (e) {
    if (bound.aborted) {
      throw new Error(`stream still open after ${ms} ms; events so far:\n${summary(events)}`, { cause: e });
    }
    if (signal?.aborted) return events;
    e.message = `${e.message}\nevents before the failure:\n${summary(events)}`;
    e.events = events;
    throw e;
  }
  if (bound.aborted) {
    throw new Error(`stream still open after ${ms} ms; events so far:\n${summary(events)}`);
  }
  return events;
}

// checkRunStream asserts what every run stream does: the first event is
// "metadata" with a run_id, no event is an error, and a closing "end"
// event, if sent, says success. It returns the metadata's run_id.
export function checkRunStream(events, what = "stream") {
  assert.ok(events.length > 0, `${what}: no events`);
  const first = events[0];
  assert.equal(first.event, "metadata", `${what}: the first event is not metadata:\n${summary(events)}`);
  assert.equal(typeof first.data?.run_id, "string", `${what}: metadata without run_id: ${short(first.data)}`);
  const errors = events.filter((e) => e.event === "error" || e.event.startsWith("error|"));
  assert.equal(errors.length, 0, `${what}: error events:\n${summary(errors, 600)}`);
  const last = events[events.length - 1];
  if (last.event === "end" && last.data != null) {
    assert.equal(last.data.status, "success", `${what}: ended ${short(last.data)}`);
  }
  return first.data.run_id;
}

// lastMessages are the messages of the last "values" event.
export function lastValues(events, what = "stream") {
  const values = events.filter((e) => e.event === "values");
  assert.ok(values.length > 0, `${what}: no values events:\n${summary(events)}`);
  return values[values.length - 1].data;
}

// assertAnswer asserts that messages end with the human text and an AI
// answer, and returns the AI message.
export function assertAnswer(messages, humanText, answer, what = "messages") {
  assert.ok(Array.isArray(messages), `${what}: messages is not an array: ${short(messages)}`);
  const human = messages.findLast((m) => kindOf(m) === "human");
  const ai = messages[messages.length - 1];
  assert.ok(human, `${what}: no human message in ${short(messages, 800)}`);
  assert.equal(textOf(human.content), humanText, `${what}: the last human message`);
  assert.equal(kindOf(ai), "ai", `${what}: the last message is not an AI message: ${short(ai)}`);
  assert.equal(textOf(ai.content), answer, `${what}: the AI answer`);
  return ai;
}

// rejectsWithStatus runs fn, which must fail with an HTTP error whose
// status is one of statuses (the SDK's errors carry .status), never a 5xx.
export async function rejectsWithStatus(fn, statuses, what) {
  let result;
  try {
    result = await fn();
  } catch (e) {
    if (e?.status === undefined) {
      assert.fail(`${what}: failed without an HTTP status (want ${statuses.join("/")}): ${e?.stack ?? e}`);
    }
    assert.ok(e.status < 500, `${what}: HTTP ${e.status} (a server error), want ${statuses.join("/")}: ${short(e.text)}`);
    assert.ok(statuses.includes(e.status), `${what}: HTTP ${e.status} ${short(e.text)}, want ${statuses.join("/")}`);
    return e;
  }
  assert.fail(`${what}: succeeded, want HTTP ${statuses.join("/")}; got ${short(result)}`);
}

// waitRun polls runs.get until the run's status satisfies ok, and returns
// the run.
export async function waitRun(c, threadId, runId, ok, what, ms = STREAM_MS) {
  const deadline = Date.now() + ms;
  let run;
  for (;;) {
    run = await c.runs.get(threadId, runId);
    if (ok(run.status)) return run;
    if (Date.now() > deadline) {
      assert.fail(`${what}: run ${runId} still ${run.status} after ${ms} ms: ${short(run)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const finished = (s) => !["pending", "running"].includes(s);

// newThread creates a thread tagged with the test's name.
export async function newThread(c, t, metadata = {}) {
  return c.threads.create({ metadata: { sdk_suite: t.name, ...metadata } });
}

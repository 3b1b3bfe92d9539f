// Assistants: the lead agent is listed and can be read, by assistant id and
// by graph id; an unknown assistant is a 404.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, client, rejectsWithStatus, short } from "./helpers.mjs";

test("assistants.search lists the lead agent", { timeout: 10_000 }, async () => {
  const c = client();
  const list = await c.assistants.search({ limit: 100 });
  assert.ok(Array.isArray(list), `search returned ${short(list)}`);
  const lead = list.find((a) => a.graph_id === ASSISTANT || a.assistant_id === ASSISTANT);
  assert.ok(lead, `no assistant with graph_id or assistant_id ${ASSISTANT} in ${short(list, 800)}`);
  for (const k of ["assistant_id", "graph_id", "created_at", "updated_at"]) {
    assert.equal(typeof lead[k], "string", `assistant.${k} in ${short(lead)}`);
  }
  assert.equal(typeof lead.metadata, "object", `assistant.metadata in ${short(lead)}`);
  assert.equal(typeof lead.config, "object", `assistant.config in ${short(lead)}`);

  const byGraph = await c.assistants.search({ graphId: ASSISTANT, limit: 10 });
  assert.ok(
    byGraph.length >= 1 && byGraph.every((a) => a.graph_id === ASSISTANT),
    `search({graphId: ${ASSISTANT}}) returned ${short(byGraph, 800)}`,
  );
  const none = await c.assistants.search({ graphId: "no-such-graph", limit: 10 });
  assert.deepEqual(none, [], "search for an unknown graph");
});

test("assistants.get by assistant id and by graph id", { timeout: 10_000 }, async () => {
  const c = client();
  const [lead] = (await c.assistants.search({ limit: 100 })).filter(
    (a) => a.graph_id === ASSISTANT || a.assistant_id === ASSISTANT,
  );
  assert.ok(lead, `search has no ${ASSISTANT}`);
  const got = await c.assistants.get(lead.assistant_id);
  assert.equal(got.assistant_id, lead.assistant_id);
  assert.equal(got.graph_id, lead.graph_id);
  // LangGraph Server takes a graph id wherever an assistant id goes (the
  // graph's default assistant): the SDK's examples pass "agent" this way.
  const byGraph = await c.assistants.get(ASSISTANT);
  assert.equal(byGraph.graph_id, ASSISTANT, `get(${ASSISTANT}) = ${short(byGraph)}`);
});

test("assistants.get of an unknown assistant is a 404", { timeout: 10_000 }, async () => {
  await rejectsWithStatus(() => client().assistants.get("no-such-assistant"), [404], "assistants.get(no-such-assistant)");
});

test("a request without the API key, or with a wrong one, is refused", { timeout: 10_000 }, async () => {
  await rejectsWithStatus(() => client({ apiKey: null }).assistants.search(), [401, 403], "no x-api-key");
  await rejectsWithStatus(() => client({ apiKey: "wrong-key" }).threads.create(), [401, 403], "a wrong x-api-key");
});

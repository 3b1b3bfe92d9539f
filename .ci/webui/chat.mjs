// Drives DeerFlow's own web UI (its frontend/, built and served by
// `pnpm start`) in headless Chromium against deerflow, as a person would.
// Steps: open (the workspace, then a new chat); answer (a message, its
// answer in the chat); streamed (the answer showed in parts as it
// streamed); upload (a file through the attachments control, sent with
// the next message); tool-call (the write_file step); presented-file (the
// presented file's card and the answer); artifact (that file opened in
// the artifacts panel); subagent (a delegated task's card and the
// answer); subagent-status (the card says the task completed); reload
// (the thread reads back from the server). The model's side is scripted
// by the caller (cmd/deerflow/webui_test.go), which passes what to type
// and what to expect in WEBUI_SCENARIO.
//
// Environment:
//
//	WEBUI_URL       the UI's origin, e.g. http://127.0.0.1:3000
//	WEBUI_CHROMIUM  the Chromium binary (the system one: playwright-core
//	                downloads no browser)
//	WEBUI_OUT       a directory for screenshots (on failure), the log of
//	                the UI's /api requests (requests.jsonl) and the page's
//	                console errors (console.log)
//	WEBUI_SCENARIO  JSON: {hello: {prompt, answer},
//	                report: {prompt, upload, toolLabel, artifactName,
//	                         artifactText, answer},
//	                delegate: {prompt, subagent, answer}}
//	WEBUI_TIMEOUT   per-wait timeout in ms (default 30000)
//
// It prints one line per step ("ok <step> <ms>ms" or "FAIL <step>: why"),
// then every /api response that was not 2xx/3xx, and exits 1 if a step
// failed. Steps go on after a failure when they can, to show as much as
// one run can.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

import { chromium } from "playwright-core";

const need = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`chat.mjs: ${name} is not set`);
    process.exit(2);
  }
  return v;
};
const ui = need("WEBUI_URL").replace(/\/+$/, "");
const executablePath = need("WEBUI_CHROMIUM");
const out = need("WEBUI_OUT");
const sc = JSON.parse(need("WEBUI_SCENARIO"));
const stepTimeout = Number(process.env.WEBUI_TIMEOUT || 30000);
mkdirSync(out, { recursive: true });
const reqLog = join(out, "requests.jsonl");
const consoleLog = join(out, "console.log");
writeFileSync(reqLog, "");
writeFileSync(consoleLog, "");

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
  timeout: 30000,
});
const context = await browser.newContext({
  viewport: { width: 1440, height: 960 },
  locale: "en-US",
});
context.setDefaultTimeout(stepTimeout);
const page = await context.newPage();

// Every response to an /api request, and the bodies of the failed ones.
const bad = [];
const pending = [];
page.on("response", (res) => {
  const req = res.request();
  const u = new URL(res.url());
  if (!u.pathname.startsWith("/api/") && !u.pathname.startsWith("/mock/")) {
    return;
  }
  const entry = {
    method: req.method(),
    path: u.pathname + u.search,
    status: res.status(),
    type: res.headers()["content-type"] ?? "",
  };
  if (/\/runs\/stream$/.test(u.pathname)) {
    // How the event stream reached the browser (through the UI server).
    const h = res.headers();
    entry.headers = {
      "content-encoding": h["content-encoding"],
      "cache-control": h["cache-control"],
      "x-accel-buffering": h["x-accel-buffering"],
    };
  }
  if (res.status() >= 400) {
    pending.push(
      Promise.race([
        res.text(),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error("no body in 5s")), 5000),
        ),
      ])
        .catch((e) => `(body unreadable: ${e.message})`)
        .then((body) => {
          entry.body = body.slice(0, 600);
          if (req.postData()) entry.request = req.postData().slice(0, 400);
          bad.push(entry);
          appendFileSync(reqLog, JSON.stringify(entry) + "\n");
        }),
    );
  } else {
    appendFileSync(reqLog, JSON.stringify(entry) + "\n");
  }
});
page.on("requestfailed", (req) => {
  const u = new URL(req.url());
  if (!u.pathname.startsWith("/api/")) return;
  const entry = {
    method: req.method(),
    path: u.pathname + u.search,
    status: 0,
    failure: req.failure()?.errorText ?? "failed",
  };
  // A stream the UI itself closes (navigation, a finished run) is
  // ERR_ABORTED: not the server's fault.
  if (entry.failure !== "net::ERR_ABORTED") bad.push(entry);
  appendFileSync(reqLog, JSON.stringify(entry) + "\n");
});
page.on("console", (msg) => {
  if (msg.type() === "error" || msg.type() === "warning") {
    appendFileSync(consoleLog, `[${msg.type()}] ${msg.text()}\n`);
  }
});
page.on("pageerror", (err) => {
  appendFileSync(consoleLog, `[pageerror] ${err.stack ?? err.message}\n`);
});

let failed = 0;
async function step(name, fn, after = true) {
  if (!after) {
    failed++;
    console.log(`FAIL ${name}: skipped (an earlier step it needs failed)`);
    return false;
  }
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok ${name} ${Date.now() - t0}ms`);
    return true;
  } catch (err) {
    failed++;
    const shot = join(out, `fail-${name}.png`);
    await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
    const why = String(err?.message ?? err)
      .split("\n")
      .slice(0, 6)
      .join(" | ");
    console.log(`FAIL ${name}: ${why} (screenshot ${shot})`);
    return false;
  }
}

const textarea = () => page.getByPlaceholder(/how can i assist you/i);
const chat = () => page.locator("#chat");
const visible = (loc, timeout) =>
  loc.first().waitFor({ state: "visible", timeout });

async function send(text) {
  const box = textarea();
  await box.fill(text);
  await box.press("Enter");
}

// 1. The UI opens: the workspace, then a new chat.
const opened = await step("open", async () => {
  await page.goto(`${ui}/workspace`, { waitUntil: "domcontentloaded" });
  const newChat = page.getByRole("link", { name: /new chat/i }).first();
  if (await newChat.isVisible().catch(() => false)) {
    await newChat.click();
  } else {
    await page.goto(`${ui}/workspace/chats/new`, {
      waitUntil: "domcontentloaded",
    });
  }
  await page.waitForURL(/\/workspace\/chats\/new/);
  await visible(textarea());
});

if (opened) {
  // 2. A message, and the streamed answer.
  let seen = "";
  const answered = await step("answer", async () => {
    // The first sight of the answer, checked every frame: a part of it
    // when it streams.
    const head = sc.hello.answer.slice(0, 12);
    const firstSight = page.waitForFunction(
      (head) => {
        const text = document.querySelector("#chat")?.innerText ?? "";
        const i = text.lastIndexOf(head);
        return i >= 0 && text.slice(i).split("\n")[0];
      },
      head,
      { polling: "raf" },
    );
    await send(sc.hello.prompt);
    await visible(chat().getByText(sc.hello.prompt));
    await visible(chat().getByText(sc.hello.answer));
    seen = await (await firstSight).jsonValue();
    await page.waitForURL(/\/workspace\/chats\/[0-9a-f-]{8,}/);
  });

  // The answer showed in parts as it streamed (Next.js gzips a proxied
  // event stream, all at once at its end, unless it says no-transform).
  await step(
    "streamed",
    async () => {
      if (seen.length >= sc.hello.answer.length) {
        throw new Error(
          `the answer showed whole at once, not in parts as the model streamed it (first sight: ${JSON.stringify(seen)})`,
        );
      }
      console.log(
        `  streamed: first seen ${seen.length} of ${sc.hello.answer.length} characters`,
      );
    },
    answered,
  );

  // 3. A file through the upload control, sent with the next message:
  // the upload, the write_file tool call, the presented file, the answer.
  const uploaded = await step("upload", async () => {
    const t0 = Date.now();
    const chooser = page.waitForEvent("filechooser");
    await page.getByTestId("add-attachments-button").first().click();
    await (await chooser).setFiles(sc.report.upload);
    await visible(page.getByText(basename(sc.report.upload)));
    const attached = Date.now() - t0;
    const upload = page.waitForResponse(
      (r) =>
        r.request().method() === "POST" &&
        /\/api\/threads\/[^/]+\/uploads$/.test(new URL(r.url()).pathname),
    );
    await send(sc.report.prompt);
    const res = await upload;
    console.log(
      `  upload: attached in ${attached}ms, uploaded ${Date.now() - t0}ms after the click`,
    );
    if (res.status() !== 200 && res.status() !== 201) {
      throw new Error(
        `upload answered ${res.status()}: ${(await res.text()).slice(0, 300)}`,
      );
    }
  });
  await step(
    "tool-call",
    async () => {
      await visible(chat().getByText(sc.report.toolLabel));
    },
    uploaded,
  );
  const presented = await step(
    "presented-file",
    async () => {
      await visible(
        chat().locator('[data-slot="card"]', {
          hasText: sc.report.artifactName,
        }),
      );
      await visible(chat().getByText(sc.report.answer));
    },
    uploaded,
  );

  // 4. The presented file opens in the artifacts panel.
  await step(
    "artifact",
    async () => {
      await chat()
        .locator('[data-slot="card"]', { hasText: sc.report.artifactName })
        .first()
        .click();
      const panel = page.locator("#artifacts");
      await visible(panel.getByText(sc.report.artifactName));
      await visible(panel.getByText(sc.report.artifactText));
    },
    presented,
  );

  // 5. A delegated task: the subagent card, the lead's answer, and the
  // card's status once the task's result is in.
  const delegated = await step(
    "subagent",
    async () => {
      await send(sc.delegate.prompt);
      await visible(chat().getByText(sc.delegate.subagent));
      await visible(chat().getByText(sc.delegate.answer));
    },
    answered,
  );
  await step(
    "subagent-status",
    async () => {
      // The run has ended by now: the status is there or never will be.
      await visible(chat().getByText(/Subtask completed/), 10000);
    },
    delegated,
  );

  // 6. The thread reloads from the server as it was.
  await step(
    "reload",
    async () => {
      await page.reload({ waitUntil: "domcontentloaded" });
      await visible(chat().getByText(sc.hello.answer));
      await visible(chat().getByText(sc.delegate.answer));
    },
    answered,
  );
}

await Promise.all(pending);
for (const b of bad) {
  console.log(
    `bad-response ${b.method} ${b.path} -> ${b.status}${b.failure ? " " + b.failure : ""}${b.body ? " body: " + b.body.replace(/\s+/g, " ").slice(0, 300) : ""}`,
  );
}
await Promise.race([
  browser.close(),
  new Promise((resolve) => setTimeout(resolve, 10000)),
]);
console.log(failed ? `RESULT fail (${failed} step(s))` : "RESULT ok");
process.exit(failed ? 1 : 0);

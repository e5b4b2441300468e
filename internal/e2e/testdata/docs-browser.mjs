// Opens the real server's /docs in headless Chromium and fails unless the
// reference shows both command operations and the Problem schema, while no
// request failed, none left 127.0.0.1 and nothing was logged as an error.
// Run by internal/e2e (TestDocsPageInBrowser) with:
//   DOCS_URL       http://127.0.0.1:<port>/docs of a running server
//   CHROMIUM       the browser binary (Debian's chromium)
//   USER_DATA_DIR  a fresh, empty profile directory
//   SCREENSHOT     where to save the PNG
//   SPEC_VERSION   openapi.yaml's info.version, which the page must show
//   SESSION_COOKIE a signed-in user's session cookie (name=value) with a
//                  deposit event: an EventSource on the docs origin must
//                  receive it from the live stream
import { chromium } from "playwright-core";

const { DOCS_URL, CHROMIUM, USER_DATA_DIR, SCREENSHOT, SPEC_VERSION, SESSION_COOKIE } = process.env;
if (!DOCS_URL || !CHROMIUM || !USER_DATA_DIR || !SCREENSHOT || !SPEC_VERSION || !SESSION_COOKIE) {
  console.error("docs-browser: DOCS_URL, CHROMIUM, USER_DATA_DIR, SCREENSHOT, SPEC_VERSION and SESSION_COOKIE must be set");
  process.exit(2);
}

const failures = [];
let streamedType;
const requests = [];
const isLocal = (url) => /^(data|blob):/.test(url) || new URL(url).hostname === "127.0.0.1";

const context = await chromium.launchPersistentContext(USER_DATA_DIR, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  // Nothing may leave the loopback interface: such a request is recorded and
  // never sent.
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    failures.push(`request left 127.0.0.1: ${route.request().method()} ${url}`);
    return route.abort("blockedbyclient");
  });
  context.on("request", (req) => requests.push(`${req.method()} ${req.url().slice(0, 120)}`));
  context.on("requestfailed", (req) => {
    // The live stream ends when the page closes its EventSource: aborted.
    if (new URL(req.url()).pathname === "/api/v1/me/events" && req.failure()?.errorText === "net::ERR_ABORTED") return;
    failures.push(`request failed: ${req.method()} ${req.url().slice(0, 200)}: ${req.failure()?.errorText}`);
  });
  context.on("response", (res) => {
    if (res.status() >= 400) failures.push(`request failed: ${res.request().method()} ${res.url()} → ${res.status()}`);
  });

  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (msg) => {
    if (msg.type() === "error") failures.push(`console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => failures.push(`page error: ${err.message}`));

  const response = await page.goto(DOCS_URL, { waitUntil: "load" });
  if (response?.status() !== 200) failures.push(`GET ${DOCS_URL} → ${response?.status()}`);
  await page.getByRole("heading", { name: /Creative review and account deposit API/ }).waitFor();

  // Both commands of the seed are in the reference.
  const operations = [
    ["creatives/executecreativeaction", /Execute a creative action/],
    ["balance/createaccountdeposit", /Create a deposit request/],
  ];
  for (const [id, name] of operations) {
    await page.evaluate((hash) => (location.hash = hash), `#/${id}`);
    await page.locator(`[id="${id}"]`).getByRole("heading", { name }).first().waitFor();
  }
  // Each operation shows its operationId, the name the client's function has.
  const shown = page.locator('[id="balance/createaccountdeposit"]').getByText("createAccountDeposit", { exact: true });
  await shown.first().waitFor({ timeout: 5_000 }).catch(() => failures.push("createAccountDeposit's operationId is not shown"));

  // The Problem schema, as rendered for createAccountDeposit's 422: its
  // properties and its description of `type`.
  const deposit = page.locator('[id="balance/createaccountdeposit"]');
  await deposit.getByRole("tab", { name: "422", exact: true }).first().click();
  for (const property of ["type", "title", "status", "code", "detail", "traceId", "fieldErrors"]) {
    await deposit.getByText(property, { exact: true }).first().waitFor();
  }
  await deposit.getByText("{base_url}/problems/<code>: a URL naming the kind of problem.").waitFor();
  await deposit.getByText('"code": "invalid_request"').first().waitFor();

  await deposit.getByRole("heading", { name: "Responses" }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: SCREENSHOT });

  // The live stream in the browser: an EventSource on this origin (the
  // page's CSP allows connect-src 'self'), with the user's session cookie,
  // receives their deposit event (from event 0 on, so it cannot race).
  const [cookieName, cookieValue] = SESSION_COOKIE.split("=");
  await context.addCookies([{ name: cookieName, value: cookieValue, url: new URL(DOCS_URL).origin }]);
  const streamed = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const source = new EventSource("/api/v1/me/events?lastEventId=0");
        const done = (result) => {
          source.close();
          resolve(result);
        };
        for (const type of ["deposit.awaiting_transfer", "deposit.confirming", "deposit.credited", "deposit.expired"]) {
          source.addEventListener(type, (e) => done({ type, id: e.lastEventId, data: JSON.parse(e.data) }));
        }
        setTimeout(() => done({ error: "no deposit event within 10 s" }), 10_000);
      }),
  );
  streamedType = streamed.type;
  if (streamed.error || streamed.data?.type !== streamed.type || !/^[0-9]+$/.test(streamed.id)) {
    failures.push(`the live stream in the browser: ${JSON.stringify(streamed).slice(0, 300)}`);
  }

  // The title shows the spec's version, and the change policy links the
  // changelog, which the server serves.
  const title = await page.locator("h1").first().textContent();
  if (!title.includes(`(${SPEC_VERSION})`)) failures.push(`the title "${title}" does not show version ${SPEC_VERSION}`);
  const changelog = page.getByRole("link", { name: "API changelog" }).first();
  const href = await changelog.getAttribute("href");
  await changelog.scrollIntoViewIfNeeded();
  await changelog.click();
  await page.waitForURL((url) => url.pathname === "/docs/changelog");
  const text = await page.locator("body").innerText();
  if (!text.startsWith("# API changelog") || !text.includes(`version ${SPEC_VERSION}`)) {
    failures.push(`the changelog link (${href}) did not lead to the changelog of ${SPEC_VERSION}: ${text.slice(0, 200)}`);
  }
} catch (err) {
  failures.push(`check failed: ${err.message.split("\n").slice(0, 3).join(" ")}`);
} finally {
  await context.close();
}

if (failures.length > 0) {
  console.error(`docs-browser: ${DOCS_URL}\n  ${[...new Set(failures)].join("\n  ")}`);
  process.exit(1);
}
console.log(`docs-browser: ${DOCS_URL} ok, ${requests.length} requests, all to 127.0.0.1 or data:/blob:; the stream delivered ${streamedType}`);

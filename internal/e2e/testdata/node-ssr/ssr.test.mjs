// The server-side recipe of clients/typescript/README.md ("In Node"), run
// by `node --test` against a real seeded server (API_BASE_URL) with the
// packed @creativeapi/client: Node's fetch keeps no cookies and Node has
// no EventSource, so both come from npm and are passed in.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiProblem, createApiClient, openEventStream } from "@creativeapi/client";
import { EventSource } from "eventsource";
import makeFetchCookie from "fetch-cookie";

const baseUrl = process.env.API_BASE_URL;
if (!baseUrl) throw new Error("API_BASE_URL is not set: run this through `go test ./internal/e2e`");
const signIn = { email: "author@acme.test", password: "demo-password-1" };
const deposit = (amountMinor) => ({ amount: { amountMinor, currency: "USDT", scale: 6 } });

test("Node's own fetch keeps no cookie: the call after sign-in is a 401 (why the jar)", { timeout: 20_000 }, async () => {
  const api = createApiClient({ baseUrl });
  await api.signIn(signIn);
  await assert.rejects(api.getMe(), (e) => e instanceof ApiProblem && e.code === "unauthenticated");
});

test("with a cookie jar the session holds: reads and commands (CSRF token included)", { timeout: 20_000 }, async () => {
  const jarFetch = makeFetchCookie(fetch, new makeFetchCookie.toughCookie.CookieJar());
  const api = createApiClient({ baseUrl, fetch: jarFetch });
  await api.signIn(signIn);
  const me = await api.getMe();
  assert.equal(me.user.email, signIn.email);
  const created = await api.createAccountDeposit(deposit("11000000"));
  assert.equal(created.status, "awaiting_transfer");
});

test("SSR: headers forward the browser's session cookie to the API", { timeout: 20_000 }, async () => {
  // The browser's request to the SSR server carried the session cookie;
  // here a jar stands for that browser.
  const jar = new makeFetchCookie.toughCookie.CookieJar();
  await createApiClient({ baseUrl, fetch: makeFetchCookie(fetch, jar) }).signIn(signIn);
  const cookie = await jar.getCookieString(baseUrl);
  assert.ok(cookie.length > 0);
  const api = createApiClient({ baseUrl, headers: { cookie } });
  assert.equal((await api.getMe()).user.email, signIn.email);
});

test("the live stream through the eventsource package, with the jar's cookie", { timeout: 20_000 }, async () => {
  const jarFetch = makeFetchCookie(fetch, new makeFetchCookie.toughCookie.CookieJar());
  const api = createApiClient({ baseUrl, fetch: jarFetch });
  await api.signIn(signIn);
  // eventsource takes the fetch to use: the jar's, so the stream has the session.
  let opened;
  const open = new Promise((resolve) => (opened = resolve));
  class JarEventSource extends EventSource {
    constructor(url, init) {
      super(url, { ...init, fetch: jarFetch });
      this.addEventListener("open", opened);
    }
  }
  let stream;
  const event = new Promise((resolve, reject) => {
    stream = openEventStream({
      baseUrl,
      EventSource: JarEventSource,
      onEvent: (e) => {
        if (e.type === "creative.created") resolve(e);
      },
      onClosed: () => reject(new Error("the stream was refused")),
    });
  });
  try {
    // A new stream carries only the events after it opened.
    await open;
    const org = (await api.getMe()).memberships[0].organization.id;
    const created = await api.createCreative(org, {
      title: "Streamed from Node", type: "static", aspectRatio: "9:16", geo: "DE", language: "de-DE",
    });
    const got = await event;
    assert.equal(got.data.id, created.id);
    assert.equal(stream.lastEventId, got.id);
  } finally {
    stream.close();
  }
});

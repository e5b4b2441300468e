// A frontend on its dev server (http://localhost:<port>, as Vite's) signs in
// and reads /api/v1/me in headless Chromium, three ways, each in a fresh
// browser context:
//   proxy  the recommended setup: the dev server proxies /api to the API,
//          the page calls its own origin (baseUrl "")     → 200 then 200
//   direct the API under the same host name, localhost    → 200 then 200
//   cross  the API as 127.0.0.1, another site: the session cookie
//          (SameSite=Lax) is not sent, so after the sign-in → 200 then 401
// Run by internal/e2e (TestTheRecommendedFrontendSetupKeepsTheSession) with
// DEV_URL, DIRECT_URL, CROSS_URL, CHROMIUM, EMAIL, PASSWORD. Prints one
// line per way: "<way> <sign-in status> <me status>".
import { chromium } from "playwright-core";

const { DEV_URL, DIRECT_URL, CROSS_URL, CHROMIUM, EMAIL, PASSWORD } = process.env;
if (!DEV_URL || !DIRECT_URL || !CROSS_URL || !CHROMIUM || !EMAIL || !PASSWORD) {
  console.error("session-browser: DEV_URL, DIRECT_URL, CROSS_URL, CHROMIUM, EMAIL and PASSWORD must be set");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
});
try {
  for (const [way, base] of [["proxy", ""], ["direct", DIRECT_URL], ["cross", CROSS_URL]]) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(DEV_URL);
    const [signIn, me] = await page.evaluate(
      async ({ base, email, password }) => {
        const signIn = await fetch(`${base}/api/v1/auth/sign-in`, {
          method: "POST",
          credentials: "include",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ email, password }),
        });
        const me = await fetch(`${base}/api/v1/me`, { credentials: "include" });
        return [signIn.status, me.status];
      },
      { base, email: EMAIL, password: PASSWORD },
    );
    console.log(`${way} ${signIn} ${me}`);
    await context.close();
  }
} finally {
  await browser.close();
}

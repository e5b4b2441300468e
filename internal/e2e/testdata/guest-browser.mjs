// A guest reviews from an invitation email in headless Chromium: a page on
// another origin than the API, with the packaged client, opens the share
// of the link (api.guest.signIn with the link's token), lists the shared
// creatives, comments on a region of the first one's image and requests
// changes; the guest's own stream (openGuestEventStream) shows the comment.
// Run by internal/e2e (TestBrowserGuestReviewsFromTheInvitationEmail):
//   PAGE_URL       the page (another origin than the API)
//   API_URL        the API's origin
//   SHARE_LINK     the link of the invitation email
//   GUEST_EMAIL    the invited address
//   CHROMIUM       the browser binary
//   USER_DATA_DIR  a fresh, empty profile directory
// Prints the page's result as one line of JSON.
import { chromium } from "playwright-core";

const { PAGE_URL, API_URL, SHARE_LINK, GUEST_EMAIL, CHROMIUM, USER_DATA_DIR } = process.env;
if (!PAGE_URL || !API_URL || !SHARE_LINK || !GUEST_EMAIL || !CHROMIUM || !USER_DATA_DIR) {
  console.error("guest-browser: PAGE_URL, API_URL, SHARE_LINK, GUEST_EMAIL, CHROMIUM and USER_DATA_DIR must be set");
  process.exit(2);
}

const context = await chromium.launchPersistentContext(USER_DATA_DIR, {
  executablePath: CHROMIUM,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(PAGE_URL);
  const result = await page.evaluate(([api, link, email]) => window.runGuest(api, link, email), [API_URL, SHARE_LINK, GUEST_EMAIL]);
  if (result.error) throw new Error(`the page failed: ${result.error}\n${errors.join("\n")}`);
  console.log(JSON.stringify(result));
} finally {
  await context.close();
}

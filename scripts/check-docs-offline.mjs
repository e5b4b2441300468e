// Opens internal/docs/index.html in headless Chromium with every network
// request blocked and recorded, clicks through the page (every operation
// and its sample dropdowns, search, colour mode), and fails if the page tried to
// load anything that is not file:, data: or blob:, or threw an error.
// Usage: node scripts/check-docs-offline.mjs [page]   (CHROMIUM=/path/to/chromium)
import { chromium } from "playwright-core";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const page_ = resolve(process.argv[2] ?? "internal/docs/index.html");
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium" });
const failures = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (/^(file|data|blob):/.test(url)) return route.continue();
    failures.push(`network: ${route.request().method()} ${url}`);
    return route.abort();
  });
  page.on("pageerror", (err) => failures.push(`page error: ${err.message}`));
  await page.goto(pathToFileURL(page_).href, { waitUntil: "load" });
  await page.getByRole("heading", { name: /Creative review and account deposit API/ }).waitFor();

  // Expand the sidebar groups, then visit every operation and open the
  // dropdowns of its samples panel (response codes, "Copy" menu).
  for (const group of ["system", "auth", "creatives", "balance"]) {
    await page.getByText(group, { exact: true }).first().click();
  }
  const hrefs = await page
    .locator('[data-component-name="Menu/MenuItem"] a')
    .evaluateAll((links) => links.map((a) => a.getAttribute("href")));
  if (hrefs.length < 15) failures.push(`only ${hrefs.length} menu items: did the page render?`);
  for (const href of hrefs) {
    await page.evaluate((h) => (location.hash = new URL(h, location.href).hash), href);
    await page.waitForTimeout(100);
    const dropdowns = page.locator('[data-component-name="Dropdown/Dropdown"] button:visible');
    for (let j = 0, n = Math.min(await dropdowns.count(), 6); j < n; j++) {
      await dropdowns.nth(j).click({ timeout: 300 }).catch(() => {});
      await page.keyboard.press("Escape");
    }
  }
  await page.getByTestId("color-mode-switcher").click();
  await page.keyboard.press("Control+K");
  await page.keyboard.type("deposit");
  await page.waitForTimeout(500);
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(`check-docs-offline: ${page_}\n  ${[...new Set(failures)].join("\n  ")}`);
  process.exit(1);
}
console.log(`check-docs-offline: ${page_} loads nothing from the network`);

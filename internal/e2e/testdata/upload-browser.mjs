// A page on another origin than the API uploads a file with the packaged
// client's uploadFile in headless Chromium: the parts go from the browser
// straight to the S3-compatible store (CORS), part 2 fails once and is
// resumed, progress is reported; the upload is added to a new version of
// an HTML5 creative ({uploadId}); then the version's file is downloaded
// back through the API's /content (302 to the store) with the browser's
// cookies and compared byte for byte. A small PNG drawn on a canvas, one
// part, goes the same way, PUT whole to its object. Run by internal/e2e (TestBrowserUploadsStraightToTheStore):
//   PAGE_URL       the page (another origin than the API)
//   API_URL        the API's origin
//   CHROMIUM       the browser binary
//   USER_DATA_DIR  a fresh, empty profile directory
import { chromium } from "playwright-core";
import { createHash } from "node:crypto";

const { PAGE_URL, API_URL, CHROMIUM, USER_DATA_DIR } = process.env;
if (!PAGE_URL || !API_URL || !CHROMIUM || !USER_DATA_DIR) {
  console.error("upload-browser: PAGE_URL, API_URL, CHROMIUM and USER_DATA_DIR must be set");
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
  // The page throttles the browser's uploads (DevTools' network
  // emulation) around its one-part upload, so progress has time to move.
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await page.exposeFunction("throttleUploads", (on) =>
    cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: on ? 2 * 2 ** 20 : -1,
    }),
  );
  const result = await page.evaluate(async (apiUrl) => window.runUpload(apiUrl), API_URL);
  if (result.error) throw new Error(`the page failed: ${result.error}\n${errors.join("\n")}`);
  if (result.dropped !== 1) throw new Error(`part 2 was dropped ${result.dropped} times, want 1`);
  if (result.progress.at(-1) !== result.size || result.progress.length < 3) {
    throw new Error(`progress ${JSON.stringify(result.progress)} does not end at ${result.size}`);
  }
  const rising = (p) => p.every((v, i) => i === 0 || v >= p[i - 1]);
  if (!rising(result.progress)) throw new Error(`progress ${JSON.stringify(result.progress)} went back`);
  const one = result.onePart;
  const between = one.progress.filter((v) => v > 0 && v < one.size);
  if (one.progress.at(-1) !== one.size || !rising(one.progress) || between.length === 0) {
    throw new Error(`the one-part upload's progress ${JSON.stringify(one.progress)} does not move from 0 to ${one.size}`);
  }
  if (result.storePuts !== 2) throw new Error(`${result.storePuts} PUTs reached the store, want 2 (part 2 once it was resumed)`);
  const { added, asset, image } = result;
  if (image.fileName !== "dot.png" || image.width !== 3 || image.height !== 2 || image.mimeType !== "image/png") {
    throw new Error(`the one-part image came back as ${JSON.stringify(image)}, want a 3×2 PNG`);
  }
  if (added.fileName !== asset.fileName || added.sizeBytes !== result.size || added.sha256 !== result.sha256 || added.url !== asset.url) {
    throw new Error(`the version's asset ${JSON.stringify(added)} is not the upload's ${JSON.stringify(asset)}`);
  }
  // The download, with the browser's cookies: /content redirects to the store.
  const res = await context.request.get(added.url.replace(/^http:\/\/api\.test/, API_URL));
  const body = await res.body();
  const digest = createHash("sha256").update(body).digest("hex");
  if (res.status() !== 200 || body.length !== result.size || digest !== result.sha256 || digest !== result.asset.sha256) {
    throw new Error(`download: ${res.status()}, ${body.length} bytes, sha256 ${digest}, want ${result.sha256}`);
  }
  console.log(`upload-browser: ${result.size} bytes in ${result.parts} parts from ${new URL(PAGE_URL).origin} to the store, part 2 resumed, added to a version, downloaded back equal; a ${image.sizeBytes}-byte PNG PUT whole; a ${one.size}-byte part reported ${between.length} steps between 0 and its size`);
} finally {
  await context.close();
}

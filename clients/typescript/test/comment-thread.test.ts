// A review thread as a frontend drives it, with the real client wrapper
// against a real server on seeded demo data (internal/e2e runs it with the
// other client tests, directly and through Prism's validating proxy): the
// reviewer pins a remark on a region of the image, the author replies and
// resolves it, the list filters by state, and deleting the remark leaves a
// tombstone so the reply keeps its thread.
//
// API_BASE_URL: the server (or Prism in front of it). PRISM=1: any
// `sl-violations` header or Prism error answer fails the run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiProblem, type Comment, type CreativeDetail } from "../src/client.js";
import { browser, throughPrism } from "./browser.js";

test("reviewer and author work through a comment thread", async (t) => {
  const violations: string[] = [];
  const author = browser(violations);
  const reviewer = browser(violations);
  let org = "";
  let creative: CreativeDetail | undefined;
  let remark: Comment | undefined;
  let reply: Comment | undefined;

  await t.test("both sign in; the author uploads a version", async () => {
    const session = await author.signIn({ email: "author@acme.test", password: "demo-password-1" });
    org = session.memberships.find((m) => m.organization.name === "Acme Ads")!.organization.id;
    await reviewer.signIn({ email: "reviewer@acme.test", password: "demo-password-1" });
    const created = await author.createCreative(org, {
      title: `Thread story ${Date.now()}`,
      type: "static",
      aspectRatio: "9:16",
      geo: "DE",
      language: "de-DE",
    });
    creative = await author.addCreativeVersion(org, created.id, {
      assets: [
        {
          fileName: "thread-v1.png",
          mimeType: "image/png",
          sizeBytes: 482133,
          sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
          url: "https://cdn.acme.test/uploads/thread-v1.png",
          width: 1080,
          height: 1920,
        },
      ],
    });
    assert.equal(creative.openCommentCount, 0);
  });

  await t.test("the reviewer pins a remark on a region, once whatever the retries", async () => {
    assert.ok(creative?.currentVersion);
    const asset = creative.currentVersion.assets[0]!;
    const key = crypto.randomUUID();
    const body = {
      body: "The price tag overlaps the logo.",
      // Fractions of the displayed image, from its top-left corner.
      anchor: { assetId: asset.id, region: { x: 0.62, y: 0.05, width: 0.3, height: 0.1 } },
      mentionUserIds: [creative.author.id],
    };
    remark = await reviewer.createCreativeComment(org, creative.id, body, { idempotencyKey: key });
    const again = await reviewer.createCreativeComment(org, creative.id, body, { idempotencyKey: key });
    assert.equal(again.id, remark.id, "the same key writes one comment");
    assert.equal(remark.versionNumber, 1);
    assert.deepEqual(remark.anchor?.region, { x: 0.62, y: 0.05, width: 0.3, height: 0.1 });
    assert.equal(remark.anchor?.timeMs, null);
    assert.deepEqual(remark.mentions, [creative.author]);
    assert.equal((await author.getCreative(org, creative.id)).openCommentCount, 1);
  });

  await t.test("a region outside the frame is refused on its field", async () => {
    assert.ok(creative?.currentVersion);
    const err = await reviewer
      .createCreativeComment(org, creative.id, {
        body: "Off the edge",
        anchor: { assetId: creative.currentVersion.assets[0]!.id, region: { x: 0.8, y: 0, width: 0.3, height: 0.1 } },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof ApiProblem);
    assert.equal(err.status, 422);
    assert.deepEqual(
      err.fieldErrors.map((f) => `${f.field} ${f.code}`),
      ["anchor.region.width out_of_range"],
    );
  });

  await t.test("the author replies and resolves the thread", async () => {
    assert.ok(creative && remark);
    reply = await author.createCreativeComment(org, creative.id, { body: "Moved the tag down.", parentId: remark.id });
    assert.equal(reply.parentId, remark.id);
    const resolved = await author.updateCreativeComment(org, creative.id, remark.id, { resolved: true });
    assert.equal(resolved.resolved, true);
    assert.equal(resolved.resolvedBy?.id, creative.author.id);
    assert.equal((await reviewer.getCreative(org, creative.id)).openCommentCount, 0);
    const open = await reviewer.listCreativeComments(org, creative.id, { resolved: false });
    assert.deepEqual(open.items, []);
    const thread = await reviewer.listCreativeComments(org, creative.id, { parentId: remark.id });
    assert.deepEqual(
      thread.items.map((c) => c.id),
      [reply.id],
    );
  });

  await t.test("deleting the remark leaves a tombstone above the reply", async () => {
    assert.ok(creative && remark && reply);
    await reviewer.deleteCreativeComment(org, creative.id, remark.id);
    const all = await reviewer.listCreativeComments(org, creative.id);
    assert.deepEqual(
      all.items.map((c) => [c.id, c.deleted, c.body]),
      [
        [remark.id, true, ""],
        [reply.id, false, "Moved the tag down."],
      ],
    );
    assert.equal(all.nextCursor, null);
  });

  if (throughPrism) {
    await t.test("Prism saw no violation", () => {
      console.log(`prism-violations: ${violations.length} of the comment thread`);
      assert.deepEqual(violations, [], "every request and response matches openapi.yaml");
    });
  }
});

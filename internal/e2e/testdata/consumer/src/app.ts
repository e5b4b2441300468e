// A frontend's use of the installed package, written only against what
// @creativeapi/client exports: the review screen submits a draft, the wallet
// screen asks for a deposit. internal/e2e type-checks it in a project
// outside the repository and runs it (main.ts) against a live seeded server.
import {
  ApiProblem,
  createApiClient,
  type AccountDeposit,
  type ApiClient,
  type ApiClientOptions,
  type CreativeDetail,
  type FieldError,
  type components,
} from "@creativeapi/client";

type ReviewStatus = components["schemas"]["ReviewStatus"];

/**
 * The badge of a review status. Enums in answers may grow (the change
 * policy), so an unknown value gets a neutral badge instead of breaking the
 * screen.
 */
export function statusBadge(status: ReviewStatus | (string & {})): string {
  switch (status) {
    case "draft":
      return "Draft";
    case "in_review":
      return "In review";
    case "changes_requested":
      return "Changes requested";
    case "approved":
      return "Approved";
    case "archived":
      return "Archived";
    default:
      return status;
  }
}

/** What the screens did, for the test to check. */
export interface Outcome {
  organizationId: string;
  draft: CreativeDetail;
  submitted: CreativeDetail;
  /** The same action sent again with the same Idempotency-Key. */
  resubmitted: CreativeDetail;
  actionKey: string;
  deposit: AccountDeposit;
  depositKey: string;
  /** The answer to a deposit below the minimum. */
  tooSmall: { status: number; code: string; fieldErrors: FieldError[] };
}

export async function run(options: ApiClientOptions): Promise<Outcome> {
  const api: ApiClient = createApiClient(options);

  // Sign in: the client keeps the CSRF token for later commands.
  const session = await api.signIn({ email: "author@acme.test", password: "demo-password-1" });
  const membership = session.memberships.find((m) => m.organization.name === "Acme Ads");
  if (!membership) throw new Error("author@acme.test is not a member of Acme Ads");
  const organizationId = membership.organization.id;

  // The review screen: the drafts the author may submit.
  const { items } = await api.listCreatives(organizationId, { reviewStatus: "draft", limit: 50 });
  const draft = items.find((c) => c.availableActions.includes("submit") && c.currentVersion !== null);
  if (!draft) throw new Error(`no draft to submit among ${items.map((c) => statusBadge(c.reviewStatus)).join(", ")}`);

  // One key per user intent: a double click or a retry sends the same one.
  const actionKey = crypto.randomUUID();
  const submit = () =>
    api.executeCreativeAction(
      organizationId,
      draft.id,
      { action: "submit", expectedVersion: draft.version },
      { idempotencyKey: actionKey },
    );
  const submitted = await submit();
  const resubmitted = await submit();

  // The wallet screen: ask for a 25 USDT deposit, then one below the minimum.
  const depositKey = crypto.randomUUID();
  const deposit = await api.createAccountDeposit(
    { amount: { amountMinor: "25000000", currency: "USDT", scale: 6 } },
    { idempotencyKey: depositKey },
  );
  let tooSmall: Outcome["tooSmall"] | undefined;
  try {
    await api.createAccountDeposit({ amount: { amountMinor: "10000", currency: "USDT", scale: 6 } });
  } catch (err) {
    if (!(err instanceof ApiProblem)) throw err;
    tooSmall = { status: err.status, code: err.code, fieldErrors: err.fieldErrors };
  }
  if (!tooSmall) throw new Error("a deposit below the minimum was accepted");

  await api.signOut();
  return { organizationId, draft, submitted, resubmitted, actionKey, deposit, depositKey, tooSmall };
}

// Typed client (browsers and Node) for the creative review and account deposit API.
// Types come from ./schema.ts (generated from openapi.yaml: `npm run client:generate`).
//
//   const api = createApiClient({ baseUrl: "http://localhost:8080" });
//   await api.signIn({ email, password });         // remembers the csrfToken
//   // or, outside the workspace, by a share's link:
//   await api.guest.signIn(token, { name, email }); // the guest's own session
//   const page = await api.listCreatives(orgId, { reviewStatus: "in_review" });
//   try { await api.executeCreativeAction(orgId, id, { action: "approve", expectedVersion: 3 }); }
//   catch (e) { if (e instanceof ApiProblem && e.code === "version_conflict") reload(); }
//
// From a backend, a personal access token replaces the session:
//   const api = createApiClient({ baseUrl, token: process.env.CREATIVEAPI_TOKEN });
import createClient, { type Client } from "openapi-fetch";
import { createSHA256 } from "hash-wasm";
import type { components, operations, paths } from "./schema.js";

/** The spec's types (generated from openapi.yaml), for anything the aliases below do not name. */
export type { components, operations, paths };

type Schemas = components["schemas"];
export type Problem = Schemas["Problem"];
export type FieldError = Schemas["FieldError"];
export type Session = Schemas["Session"];
export type SignInRequest = Schemas["SignInRequest"];
export type CreativeDetail = Schemas["CreativeDetail"];
export type CreativeList = Schemas["CreativeList"];
export type CreativeActionRequest = Schemas["CreativeActionRequest"];
export type CreateCreativeRequest = Schemas["CreateCreativeRequest"];
export type AddCreativeVersionRequest = Schemas["AddCreativeVersionRequest"];
export type UpdateCreativeRequest = Schemas["UpdateCreativeRequest"];
export type CreativeEvent = Schemas["CreativeEvent"];
export type CreativeEventList = Schemas["CreativeEventList"];
export type Member = Schemas["Member"];
export type MemberList = Schemas["MemberList"];
export type AccountDeposit = Schemas["AccountDeposit"];
export type AccountDepositList = Schemas["AccountDepositList"];
export type AccountBalance = Schemas["AccountBalance"];
export type CreateAccountDepositRequest = Schemas["CreateAccountDepositRequest"];
export type Upload = Schemas["Upload"];
export type Asset = Schemas["Asset"];
/**
 * An uploaded file's Asset, as the completed upload and every version made
 * from it show it (one `id` everywhere); a version takes it as `{ uploadId }`.
 */
export type UploadedAsset = Asset & { uploadId: string };
export type AssetMimeType = Schemas["AssetMimeType"];
export type ClaimAccountDepositRequest = Schemas["ClaimAccountDepositRequest"];
export type ListCreativesQuery = NonNullable<operations["listCreatives"]["parameters"]["query"]>;
export type ListAccountDepositsQuery = NonNullable<operations["listAccountDeposits"]["parameters"]["query"]>;
export type ListCreativeEventsQuery = NonNullable<operations["listCreativeEvents"]["parameters"]["query"]>;
export type ListOrganizationMembersQuery = NonNullable<operations["listOrganizationMembers"]["parameters"]["query"]>;
export type Comment = Schemas["Comment"];
export type CommentList = Schemas["CommentList"];
export type CommentAnchor = Schemas["CommentAnchor"];
export type CreateCommentRequest = Schemas["CreateCommentRequest"];
export type UpdateCommentRequest = Schemas["UpdateCommentRequest"];
export type ListCreativeCommentsQuery = NonNullable<operations["listCreativeComments"]["parameters"]["query"]>;
export type OperatorTransfer = Schemas["OperatorTransfer"];
export type OperatorTransferList = Schemas["OperatorTransferList"];
export type TransferSettlement = Schemas["TransferSettlement"];
export type SettleTransferRequest = Schemas["SettleTransferRequest"];
export type ListOperatorTransfersQuery = NonNullable<operations["listOperatorTransfers"]["parameters"]["query"]>;
export type CreativeApproval = Schemas["CreativeApproval"];
export type ApprovalRecord = Schemas["ApprovalRecord"];
export type AccessToken = Schemas["AccessToken"];
export type AccessTokenList = Schemas["AccessTokenList"];
export type ListAccessTokensQuery = NonNullable<operations["listAccessTokens"]["parameters"]["query"]>;
export type CreatedAccessToken = Schemas["CreatedAccessToken"];
export type CreateAccessTokenRequest = Schemas["CreateAccessTokenRequest"];
export type TokenScope = Schemas["TokenScope"];
export type JSONWebKeySet = Schemas["JSONWebKeySet"];
export type GuestSession = Schemas["GuestSession"];
export type GuestCreateCommentRequest = Schemas["GuestCreateCommentRequest"];
export type GuestUpdateCommentRequest = Schemas["GuestUpdateCommentRequest"];
export type GuestActionRequest = Schemas["GuestActionRequest"];
export type ListGuestCreativesQuery = NonNullable<operations["listGuestCreatives"]["parameters"]["query"]>;
export type ListGuestCreativeCommentsQuery = NonNullable<operations["listGuestCreativeComments"]["parameters"]["query"]>;
/**
 * Who opens a share: the name the guest gives, the email (optional with
 * `shareInvitationToken`, the `#invitation=` of the invitation's own link,
 * which verifies the session), and the share's password when it has one.
 */
export interface GuestSignIn {
  name: string;
  email?: string;
  shareInvitationToken?: string;
  password?: string;
}
export type GuestVerification = Schemas["GuestVerification"];

export interface ApiClientOptions {
  /** Origin of the API, e.g. "https://api.example.com" (paths already start with /api/v1). */
  baseUrl: string;
  /**
   * The fetch to use; defaults to globalThis.fetch. In Node, pass one that
   * keeps cookies (Node's fetch keeps none: every call after sign-in would
   * be a 401), such as fetch-cookie's (README, "In Node").
   */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Headers sent with every request; on a server rendering for a browser
   * (SSR), `{ cookie }` forwards that browser's session.
   */
  headers?: Record<string, string>;
  /**
   * A personal access token (`cat_…`, made with createAccessToken) for a
   * backend: sent as `Authorization: Bearer`, with no cookie and no CSRF
   * token. It acts as its user within its scopes.
   */
  token?: string;
}

export interface CommandOptions {
  /** One key per user intent; generated when absent and reused on the helper's own retries. */
  idempotencyKey?: string;
}

/** Every non-2xx answer, thrown with the server's Problem (code, detail, traceId, fieldErrors). */
export class ApiProblem extends Error {
  override readonly name = "ApiProblem";
  readonly status: number;
  readonly code: string;
  readonly fieldErrors: FieldError[];
  /** Seconds from the Retry-After header, when the server sent one. */
  readonly retryAfter: number | undefined;

  constructor(readonly problem: Problem, retryAfter?: number) {
    super(`${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
    this.fieldErrors = problem.fieldErrors ?? [];
    this.retryAfter = retryAfter;
  }

  static fromResponse(response: Response, body: unknown): ApiProblem {
    const b = body as Partial<Problem> | null;
    const problem: Problem =
      typeof b === "object" && b !== null && typeof b.code === "string" && typeof b.status === "number"
        ? (b as Problem)
        : {
            type: "about:blank",
            title: response.statusText || "Unexpected response",
            status: response.status,
            code: "unexpected_response",
            detail: typeof body === "string" && body ? body.slice(0, 200) : `HTTP ${response.status} without a Problem body.`,
            traceId: "",
          };
    const seconds = Number.parseInt(response.headers.get("Retry-After") ?? "", 10);
    return new ApiProblem(problem, Number.isFinite(seconds) ? seconds : undefined);
  }
}

const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** The paths a guest session opens (and only it): their unsafe calls send the guest's csrfToken. */
const GUEST_PREFIX = "/api/v1/guest/";
const MAX_TRIES = 3;
const MAX_RETRY_AFTER_SECONDS = 5;

/** Resolves to the 2xx body, or throws ApiProblem (HTTP error) or the fetch error (network). */
async function unwrap<D, E>(pending: Promise<{ data?: D; error?: E; response: Response }>): Promise<D> {
  const { data, error, response } = await pending;
  if (!response.ok) throw ApiProblem.fromResponse(response, error);
  return data as D;
}

/** Milliseconds to wait before the next try, or undefined when the error is final. */
function retryDelay(err: unknown, attempt: number): number | undefined {
  if (attempt >= MAX_TRIES) return undefined;
  if (err instanceof DOMException && err.name === "AbortError") return undefined;
  if (err instanceof ApiProblem) {
    const transient =
      (err.status >= 500 && err.code !== "deposits_unavailable") || err.code === "idempotency_key_in_use";
    if (!transient) return undefined;
    if (err.retryAfter !== undefined) {
      return err.retryAfter <= MAX_RETRY_AFTER_SECONDS ? err.retryAfter * 1000 : undefined;
    }
  }
  return 250 * 2 ** (attempt - 1); // network error or 5xx: 250 ms, then 500 ms
}

/** Runs a command with one Idempotency-Key for all its tries (network errors, 5xx, key in use). */
async function withRetries<T>(options: CommandOptions | undefined, run: (key: string) => Promise<T>): Promise<T> {
  const key = options?.idempotencyKey ?? crypto.randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(key);
    } catch (err) {
      const delay = retryDelay(err, attempt);
      if (delay === undefined) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

export function createApiClient({ baseUrl, fetch, headers, token }: ApiClientOptions) {
  const raw: Client<paths> = createClient<paths>({
    baseUrl,
    // A token is the credential: no cookie may ride along (the server
    // refuses both at once).
    credentials: token ? "omit" : "include",
    ...(fetch ? { fetch } : {}),
    ...(headers || token ? { headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) } } : {}),
  });
  let csrfToken: string | undefined;
  // A guest session's own token: one client may hold a user's session and
  // a guest's, each sent on its own paths.
  let guestCsrfToken: string | undefined;

  raw.use({
    onRequest({ request }) {
      const token = new URL(request.url).pathname.startsWith(GUEST_PREFIX) ? guestCsrfToken : csrfToken;
      if (token && UNSAFE_METHODS.has(request.method)) request.headers.set("X-CSRF-Token", token);
      return request;
    },
  });

  const remember = (session: Session): Session => {
    csrfToken = session.csrfToken;
    return session;
  };

  return {
    /** The underlying openapi-fetch client (same cookie and CSRF handling), for anything not wrapped here. */
    raw,

    /**
     * A guest's calls: a person outside the organization who holds a
     * share's link (`{APP_URL}/share/{token}`). signIn opens the guest
     * session (its own cookie) and remembers its csrfToken; the rest act on
     * the share's creatives only (another creative is 404). Only a verified
     * session decides: opened with the invitation's own token, or confirmed
     * with the code `requestVerification` mails.
     */
    guest: {
      /** Opens the share of `token`: 404 `share_not_found` (unknown, expired or revoked), 401 `share_password_required`, 409 `member_email`. */
      signIn: async (token: string, who: GuestSignIn): Promise<GuestSession> => {
        const session = await unwrap(raw.POST("/api/v1/guest/sessions", { body: { token, ...who } }));
        guestCsrfToken = session.csrfToken;
        return session;
      },
      /** Mails a six-digit code to the session's email (10 minutes, 5 tries); always 202 `{expiresAt}`. */
      requestVerification: async (): Promise<GuestVerification> => unwrap(raw.POST("/api/v1/guest/verify", {})),
      /** Confirms the mailed code: the session is replaced by a verified one (new cookie, new csrfToken). 422 wrong code, 409 `code_expired`, 409 `member_email`. */
      confirmVerification: async (code: string): Promise<GuestSession> => {
        const session = await unwrap(raw.POST("/api/v1/guest/verify/confirm", { body: { code } }));
        guestCsrfToken = session.csrfToken;
        return session;
      },
      /** The shared creatives, in the share's order, with the guest's `availableActions`. */
      listCreatives: (query?: ListGuestCreativesQuery): Promise<CreativeList> =>
        unwrap(raw.GET("/api/v1/guest/creatives", { params: { query } })),
      getCreative: (creativeId: string): Promise<CreativeDetail> =>
        unwrap(raw.GET("/api/v1/guest/creatives/{creativeId}", { params: { path: { creativeId } } })),
      /** The creative's comments a guest may see (never the members' internal ones), oldest first. */
      listComments: (creativeId: string, query?: ListGuestCreativeCommentsQuery): Promise<CommentList> =>
        unwrap(raw.GET("/api/v1/guest/creatives/{creativeId}/comments", { params: { path: { creativeId }, query } })),
      /** A comment (with an anchor) or a reply, by a guest of a `comment` or `decide` share; one per Idempotency-Key. */
      comment: (creativeId: string, body: GuestCreateCommentRequest, options?: CommandOptions): Promise<Comment> =>
        withRetries(options, (key) =>
          unwrap(
            raw.POST("/api/v1/guest/creatives/{creativeId}/comments", {
              params: { path: { creativeId }, header: { "Idempotency-Key": key } },
              body,
            }),
          ),
        ),
      /** Edits or resolves a comment the guest wrote; safe to resend. */
      updateComment: (creativeId: string, commentId: string, body: GuestUpdateCommentRequest): Promise<Comment> =>
        withRetries(undefined, () =>
          unwrap(
            raw.PATCH("/api/v1/guest/creatives/{creativeId}/comments/{commentId}", {
              params: { path: { creativeId, commentId } },
              body,
            }),
          ),
        ),
      /** `approve` or `request_changes` (with a `comment`), by a guest of a `decide` share. */
      decide: (creativeId: string, body: GuestActionRequest, options?: CommandOptions): Promise<CreativeDetail> =>
        withRetries(options, (key) =>
          unwrap(
            raw.POST("/api/v1/guest/creatives/{creativeId}/actions", {
              params: { path: { creativeId }, header: { "Idempotency-Key": key } },
              body,
            }),
          ),
        ),
    },

    signIn: async (body: SignInRequest): Promise<Session> =>
      remember(await unwrap(raw.POST("/api/v1/auth/sign-in", { body }))),
    signOut: async (): Promise<void> => {
      await unwrap(raw.POST("/api/v1/auth/sign-out"));
      csrfToken = undefined;
    },
    /** Makes a personal access token for a backend (a session only); its `token` is shown this once. */
    createAccessToken: (body: CreateAccessTokenRequest): Promise<CreatedAccessToken> =>
      unwrap(raw.POST("/api/v1/me/tokens", { body })),
    /** One page of the user's tokens that still work, newest first; pass `nextCursor` as `cursor` for the next. */
    listAccessTokens: (query?: ListAccessTokensQuery): Promise<AccessTokenList> =>
      unwrap(raw.GET("/api/v1/me/tokens", { params: { query } })),
    revokeAccessToken: async (tokenId: string): Promise<void> => {
      await unwrap(raw.DELETE("/api/v1/me/tokens/{tokenId}", { params: { path: { tokenId } } }));
    },
    /** The signed-in user; call it on page load to recover the session's csrfToken. */
    getMe: async (): Promise<Session> => remember(await unwrap(raw.GET("/api/v1/me"))),

    listCreatives: (organizationId: string, query?: ListCreativesQuery): Promise<CreativeList> =>
      unwrap(raw.GET("/api/v1/organizations/{organizationId}/creatives", { params: { path: { organizationId }, query } })),
    getCreative: (organizationId: string, creativeId: string): Promise<CreativeDetail> =>
      unwrap(
        raw.GET("/api/v1/organizations/{organizationId}/creatives/{creativeId}", {
          params: { path: { organizationId, creativeId } },
        }),
      ),
    executeCreativeAction: (
      organizationId: string,
      creativeId: string,
      body: CreativeActionRequest,
      options?: CommandOptions,
    ): Promise<CreativeDetail> =>
      withRetries(options, (key) =>
        unwrap(
          raw.POST("/api/v1/organizations/{organizationId}/creatives/{creativeId}/actions", {
            params: { path: { organizationId, creativeId }, header: { "Idempotency-Key": key } },
            body,
          }),
        ),
      ),

    /** Creates a draft (author or admin); the Idempotency-Key makes a retried create one creative. */
    createCreative: (organizationId: string, body: CreateCreativeRequest, options?: CommandOptions): Promise<CreativeDetail> =>
      withRetries(options, (key) =>
        unwrap(
          raw.POST("/api/v1/organizations/{organizationId}/creatives", {
            params: { path: { organizationId }, header: { "Idempotency-Key": key } },
            body,
          }),
        ),
      ),
    /** Uploads a new version (its assets already in your storage); the Idempotency-Key makes a retry one version. */
    addCreativeVersion: (
      organizationId: string,
      creativeId: string,
      body: AddCreativeVersionRequest,
      options?: CommandOptions,
    ): Promise<CreativeDetail> =>
      withRetries(options, (key) =>
        unwrap(
          raw.POST("/api/v1/organizations/{organizationId}/creatives/{creativeId}/versions", {
            params: { path: { organizationId, creativeId }, header: { "Idempotency-Key": key } },
            body,
          }),
        ),
      ),
    /** Changes the fields sent (null clears); safe to resend, so retried like the commands, without a key. */
    updateCreative: (organizationId: string, creativeId: string, body: UpdateCreativeRequest): Promise<CreativeDetail> =>
      withRetries(undefined, () =>
        unwrap(
          raw.PATCH("/api/v1/organizations/{organizationId}/creatives/{creativeId}", {
            params: { path: { organizationId, creativeId } },
            body,
          }),
        ),
      ),
    /** The signed record of the creative's approved version (404 when never approved); check it with verifyApproval. */
    getCreativeApproval: (organizationId: string, creativeId: string): Promise<CreativeApproval> =>
      unwrap(
        raw.GET("/api/v1/organizations/{organizationId}/creatives/{creativeId}/approval", {
          params: { path: { organizationId, creativeId } },
        }),
      ),
    /** The public keys that verify approval records (no session needed). */
    getApprovalKeys: (): Promise<JSONWebKeySet> => unwrap(raw.GET("/.well-known/jwks.json")),
    /** The creative's history, newest first: who did what, review comments, changed fields. */
    listCreativeEvents: (organizationId: string, creativeId: string, query?: ListCreativeEventsQuery): Promise<CreativeEventList> =>
      unwrap(
        raw.GET("/api/v1/organizations/{organizationId}/creatives/{creativeId}/events", {
          params: { path: { organizationId, creativeId }, query },
        }),
      ),
    /** A creative's review comments, oldest first (filters `versionNumber`, `resolved`, `parentId`). */
    listCreativeComments: (organizationId: string, creativeId: string, query?: ListCreativeCommentsQuery): Promise<CommentList> =>
      unwrap(
        raw.GET("/api/v1/organizations/{organizationId}/creatives/{creativeId}/comments", {
          params: { path: { organizationId, creativeId }, query },
        }),
      ),
    /** Comments on a version (or replies with `parentId`); the Idempotency-Key makes a retried comment one comment. */
    createCreativeComment: (
      organizationId: string,
      creativeId: string,
      body: CreateCommentRequest,
      options?: CommandOptions,
    ): Promise<Comment> =>
      withRetries(options, (key) =>
        unwrap(
          raw.POST("/api/v1/organizations/{organizationId}/creatives/{creativeId}/comments", {
            params: { path: { organizationId, creativeId }, header: { "Idempotency-Key": key } },
            body,
          }),
        ),
      ),
    /** Edits a comment's body (its author) or resolves/reopens its thread (`resolved`); safe to resend. */
    updateCreativeComment: (
      organizationId: string,
      creativeId: string,
      commentId: string,
      body: UpdateCommentRequest,
    ): Promise<Comment> =>
      withRetries(undefined, () =>
        unwrap(
          raw.PATCH("/api/v1/organizations/{organizationId}/creatives/{creativeId}/comments/{commentId}", {
            params: { path: { organizationId, creativeId, commentId } },
            body,
          }),
        ),
      ),
    /** Deletes a comment; one with replies stays as a tombstone (`deleted: true`). */
    deleteCreativeComment: async (organizationId: string, creativeId: string, commentId: string): Promise<void> => {
      await unwrap(
        raw.DELETE("/api/v1/organizations/{organizationId}/creatives/{creativeId}/comments/{commentId}", {
          params: { path: { organizationId, creativeId, commentId } },
        }),
      );
    },
    /** The organization's members by name (`role: ["reviewer", "admin"]`: who may be assigned as reviewer). */
    listOrganizationMembers: (organizationId: string, query?: ListOrganizationMembersQuery): Promise<MemberList> =>
      unwrap(raw.GET("/api/v1/organizations/{organizationId}/members", { params: { path: { organizationId }, query } })),

    getAccountBalance: (): Promise<AccountBalance> => unwrap(raw.GET("/api/v1/me/balance")),
    listAccountDeposits: (query?: ListAccountDepositsQuery): Promise<AccountDepositList> =>
      unwrap(raw.GET("/api/v1/me/balance/deposits", { params: { query } })),
    getAccountDeposit: (depositId: string): Promise<AccountDeposit> =>
      unwrap(raw.GET("/api/v1/me/balance/deposits/{depositId}", { params: { path: { depositId } } })),
    createAccountDeposit: (body: CreateAccountDepositRequest, options?: CommandOptions): Promise<AccountDeposit> =>
      withRetries(options, (key) =>
        unwrap(raw.POST("/api/v1/me/balance/deposits", { params: { header: { "Idempotency-Key": key } }, body })),
      ),

    /**
     * Uploads a file (author or admin) straight to the object store and
     * returns its Asset with its uploadId (add it to a version as
     * `{ uploadId }`): streaming SHA-256, parts in parallel, a failed part
     * resumed with a fresh URL, abort by options.signal.
     */
    uploadFile: (organizationId: string, file: Blob & { name?: string }, options?: UploadFileOptions): Promise<UploadedAsset> =>
      uploadFileWith(raw, organizationId, file, options),
    /** The upload as the server and the store see it (which parts arrived, fresh URLs for the rest). */
    getUpload: (organizationId: string, uploadId: string): Promise<Upload> =>
      unwrap(
        raw.GET("/api/v1/organizations/{organizationId}/uploads/{uploadId}", {
          params: { path: { organizationId, uploadId } },
        }),
      ),
    /**
     * Deletes a pending upload (its creator or an admin): its reservation is
     * freed and the store refuses its URLs. 409 `invalid_transition` once it
     * is ready or failed; 404 once deleted.
     */
    deleteUpload: async (organizationId: string, uploadId: string): Promise<void> => {
      await unwrap(
        raw.DELETE("/api/v1/organizations/{organizationId}/uploads/{uploadId}", {
          params: { path: { organizationId, uploadId } },
        }),
      );
    },
    /**
     * Names the transaction that paid the deposit with another amount; the
     * deposit goes `under_review`. 409 `transfer_unknown` (not seen yet:
     * not retried here: call again after `Retry-After`, with the same
     * `idempotencyKey`), `transfer_taken`,
     * `invalid_transition`.
     */
    claimAccountDeposit: (depositId: string, body: ClaimAccountDepositRequest, options?: CommandOptions): Promise<AccountDeposit> =>
      withRetries(options, (key) =>
        unwrap(
          raw.POST("/api/v1/me/balance/deposits/{depositId}/claim", {
            params: { path: { depositId }, header: { "Idempotency-Key": key } },
            body,
          }),
        ),
      ),

    /** Platform operators only (404 for anyone else): transfers to the treasury, filtered by status and needsReview. */
    listOperatorTransfers: (query?: ListOperatorTransfersQuery): Promise<OperatorTransferList> =>
      unwrap(raw.GET("/api/v1/operator/transfers", { params: { query } })),
    /** Platform operators only: one transfer with its settlement audit records. */
    getOperatorTransfer: (transferId: OperatorTransfer["id"]): Promise<OperatorTransfer> =>
      unwrap(raw.GET("/api/v1/operator/transfers/{transferId}", { params: { path: { transferId } } })),
    /** Platform operators only: settle a transfer waiting for review (one Idempotency-Key for its retries). */
    settleOperatorTransfer: (transferId: OperatorTransfer["id"], body: SettleTransferRequest, options?: CommandOptions): Promise<OperatorTransfer> =>
      withRetries(options, (key) =>
        unwrap(
          raw.POST("/api/v1/operator/transfers/{transferId}/settlements", {
            params: { path: { transferId }, header: { "Idempotency-Key": key } },
            body,
          }),
        ),
      ),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;

// ---- Uploads (files go from the browser straight to the object store) ----

export interface UploadFileOptions {
  /**
   * Called as the file's bytes go out (at least every 256 KiB in Node; in
   * browsers as often as XMLHttpRequest reports upload progress): bytes
   * sent so far, of the file's size. Monotonic; the last call says `total`.
   */
  onProgress?: (sent: number, total: number) => void;
  /** Aborts hashing, the parts in flight and the upload's commands. */
  signal?: AbortSignal;
  /** Parts sent at once (default 4). */
  concurrency?: number;
  /** A file's name when `file` is a Blob without one. */
  fileName?: string;
}

/** How many bytes of the file are hashed at a time: the file never sits in memory whole. */
const HASH_CHUNK = 4 << 20;
/** Rounds of sending the parts not yet stored, each after reading the upload again (resume). */
const PART_ROUNDS = 4;
/** The most bytes a part's body hands to fetch between two progress reports (Node). */
const PROGRESS_STEP = 64 << 10;

/** The file's SHA-256 in lowercase hex, read in chunks (hash-wasm's streaming SHA-256). */
export async function sha256OfFile(file: Blob, signal?: AbortSignal): Promise<string> {
  const hasher = await createSHA256();
  hasher.init();
  for (let start = 0; start < file.size; start += HASH_CHUNK) {
    signal?.throwIfAborted();
    hasher.update(new Uint8Array(await file.slice(start, start + HASH_CHUNK).arrayBuffer()));
  }
  return hasher.digest("hex");
}

/** What putPart needs of the browser's XMLHttpRequest (absent in Node). */
interface XHRLike {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: Blob): void;
  abort(): void;
  readonly status: number;
  readonly upload: { onprogress: ((event: { loaded: number }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}

/**
 * PUTs one part's bytes to its presigned URL with the headers signed into
 * it, calling onSent with the bytes sent so far. Browsers go through
 * XMLHttpRequest, whose upload
 * progress events are the only ones a browser gives (fetch reports none);
 * elsewhere (Node) fetch reads the body through a stream that counts what
 * it hands over, PROGRESS_STEP at a time, with the part's length declared
 * (the store refuses a body of another length).
 */
function putPart(
  url: string,
  headers: Record<string, string>,
  body: Blob,
  signal: AbortSignal | undefined,
  onSent: (bytes: number) => void,
): Promise<void> {
  const XHR = (globalThis as { XMLHttpRequest?: new () => XHRLike }).XMLHttpRequest;
  if (XHR) {
    return new Promise((resolve, reject) => {
      signal?.throwIfAborted();
      const xhr = new XHR();
      const abort = () => xhr.abort();
      signal?.addEventListener("abort", abort, { once: true });
      const done = (err?: Error) => {
        signal?.removeEventListener("abort", abort);
        if (err) reject(err);
        else resolve();
      };
      xhr.upload.onprogress = (event) => onSent(event.loaded);
      xhr.onload = () =>
        xhr.status >= 200 && xhr.status < 300 ? (onSent(body.size), done()) : done(new Error(`HTTP ${xhr.status}`));
      xhr.onerror = () => done(new TypeError("network error"));
      xhr.onabort = () => done(signal?.reason ?? new DOMException("aborted", "AbortError"));
      xhr.open("PUT", url);
      for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
      xhr.send(body);
    });
  }
  const reader = body.stream().getReader();
  let sent = 0;
  let pending: Uint8Array | undefined;
  const counted = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!pending?.length) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        pending = value;
      }
      const chunk = pending.subarray(0, PROGRESS_STEP);
      pending = pending.subarray(chunk.length);
      sent += chunk.length;
      controller.enqueue(chunk);
      onSent(sent);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return fetch(url, {
    method: "PUT",
    body: counted,
    headers: { ...headers, "Content-Length": String(body.size) },
    signal: signal ?? null,
    duplex: "half",
  } as RequestInit).then((res) => {
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  });
}

/**
 * Uploads file to the organization's storage and returns its Asset: the
 * SHA-256 is computed while reading the file in chunks, the parts go
 * straight to the object store (several at once), a part that fails is
 * sent again with a fresh URL after reading which parts the store already
 * holds, and the server then checks the stored file. Throws ApiProblem
 * (e.g. `upload_mismatch`, `storage_quota_exceeded`) or the abort error.
 */
async function uploadFileWith(
  raw: Client<paths>,
  organizationId: string,
  file: Blob & { name?: string },
  options: UploadFileOptions = {},
): Promise<UploadedAsset> {
  const { signal } = options;
  const sha256 = await sha256OfFile(file, signal);
  const path = { organizationId };
  const upload: Upload = await withRetries(undefined, (key) =>
    unwrap(
      raw.POST("/api/v1/organizations/{organizationId}/uploads", {
        params: { path, header: { "Idempotency-Key": key } },
        body: {
          fileName: options.fileName ?? file.name ?? "file",
          mimeType: file.type as AssetMimeType,
          sizeBytes: file.size,
          sha256,
        },
        signal,
      }),
    ),
  );
  const uploadPath = { organizationId, uploadId: upload.id };
  try {
    return await sendAndComplete(raw, file, upload, uploadPath, options);
  } catch (err) {
    // Given up (aborted, or parts failing round after round): the pending
    // upload would hold its place among the caller's pending uploads (20
    // at most) for an hour; delete it, as best we can.
    if (signal?.aborted || err instanceof PartsFailedError) {
      await raw.DELETE("/api/v1/organizations/{organizationId}/uploads/{uploadId}", { params: { path: uploadPath } }).catch(() => undefined);
    }
    throw err;
  }
}

/** uploadFile's parts failed PART_ROUNDS times. */
class PartsFailedError extends Error {}

/** Sends the parts of upload the store lacks, round after round, then completes it. */
async function sendAndComplete(
  raw: Client<paths>,
  file: Blob,
  first: Upload,
  uploadPath: { organizationId: string; uploadId: string },
  options: UploadFileOptions,
): Promise<UploadedAsset> {
  const { signal, onProgress } = options;
  let upload = first;
  const partLength = (n: number) => Math.min(upload.partSize, file.size - (n - 1) * upload.partSize);
  // Progress is the bytes of the parts the store holds plus those on their
  // way; a part that fails takes its bytes back, so the report never goes
  // below what it said before.
  let reported = -1;
  const inFlight = new Map<number, number>();
  let stored = 0;
  const report = () => {
    let sent = stored;
    for (const bytes of inFlight.values()) sent += bytes;
    if (sent > reported) {
      reported = sent;
      onProgress?.(sent, file.size);
    }
  };
  for (let round = 1; ; round++) {
    stored = upload.parts.filter((p) => p.received).reduce((sum, p) => sum + partLength(p.number), 0);
    report();
    const todo = upload.parts.filter((p) => !p.received && p.url);
    if (todo.length === 0) break;
    let failed = 0;
    const queue = [...todo];
    const worker = async () => {
      for (let part = queue.shift(); part; part = queue.shift()) {
        const start = (part.number - 1) * upload.partSize;
        const number = part.number;
        try {
          // The part's headers are signed into its URL (a file of one
          // part: the SHA-256 the store checks); the store refuses the
          // PUT without them.
          await putPart(part.url as string, part.headers, file.slice(start, start + partLength(number)), signal, (bytes) => {
            inFlight.set(number, bytes);
            report();
          });
          inFlight.delete(number);
          stored += partLength(number);
          report();
        } catch (err) {
          inFlight.delete(number);
          if (signal?.aborted) throw err;
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, todo.length) }, worker));
    if (failed === 0) break;
    if (round >= PART_ROUNDS) throw new PartsFailedError(`uploadFile: ${failed} parts failed ${PART_ROUNDS} times`);
    // Resume: the store says which parts it holds; the rest get fresh URLs.
    upload = await unwrap(
      raw.GET("/api/v1/organizations/{organizationId}/uploads/{uploadId}", { params: { path: uploadPath }, signal }),
    );
  }
  const done: Upload = await withRetries(undefined, (key) =>
    unwrap(
      raw.POST("/api/v1/organizations/{organizationId}/uploads/{uploadId}/complete", {
        params: { path: uploadPath, header: { "Idempotency-Key": key } },
        body: {},
        signal,
      }),
    ),
  );
  const asset = done.asset;
  if (!asset || asset.uploadId !== done.id) throw new Error("uploadFile: the completed upload has no asset of its own");
  return { ...asset, uploadId: asset.uploadId };
}

// ---- Approval records (verifiable without the API) ----

function base64url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Verifies an approval record's compact JWS (EdDSA, Ed25519) against the
 * key set of /.well-known/jwks.json with the runtime's Web Crypto, and
 * returns the record it signs; throws when it does not verify. Runs where
 * Web Crypto has Ed25519: Node 20+, current Chromium, Firefox and Safari.
 * Compare a file in hand with `record.assets[i].sha256` (sha256OfFile).
 */
export async function verifyApproval(jws: string, jwks: JSONWebKeySet): Promise<ApprovalRecord> {
  const [header, payload, signature] = jws.split(".");
  if (header === undefined || payload === undefined || signature === undefined || jws.split(".").length !== 3) {
    throw new Error("verifyApproval: not a compact JWS");
  }
  const { alg, kid } = JSON.parse(new TextDecoder().decode(base64url(header))) as { alg?: string; kid?: string };
  if (alg !== "EdDSA") throw new Error(`verifyApproval: alg ${alg}, want EdDSA`);
  const jwk = jwks.keys.find((k) => k.kid === kid);
  if (!jwk) throw new Error(`verifyApproval: no key ${kid} in the key set`);
  const key = await crypto.subtle.importKey("jwk", { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
  const signed = new TextEncoder().encode(`${header}.${payload}`);
  if (!(await crypto.subtle.verify({ name: "Ed25519" }, key, base64url(signature), signed))) {
    throw new Error("verifyApproval: the signature does not verify");
  }
  return JSON.parse(new TextDecoder().decode(base64url(payload))) as ApprovalRecord;
}

// ---- The live stream (GET /api/v1/me/events) ----

export type EventPayload = Schemas["EventPayload"];
export type CreativeEventPayload = Schemas["CreativeEventPayload"];
export type DepositEventPayload = Schemas["DepositEventPayload"];
export type CommentEventPayload = Schemas["CommentEventPayload"];
export type CreativeSnapshot = Schemas["CreativeSnapshot"];
export type EventType = EventPayload["type"];
/** One event of the live stream: its payload, narrowed by `type`, and its `id` (resume after it). */
export type StreamEvent = EventPayload & { id: string };

/** The event types this client knows; events of types added later are skipped, as the spec asks. */
export const EVENT_TYPES = [
  "creative.created",
  "creative.version_added",
  "creative.updated",
  "creative.submitted",
  "creative.changes_requested",
  "creative.approved",
  "creative.archived",
  "creative.comment_added",
  "creative.comment_resolved",
  "creative.decision_recorded",
  "creative.stage_approved",
  "creative.stage_due_soon",
  "creative.stage_overdue",
  "creative.mentioned",
  "deposit.awaiting_transfer",
  "deposit.confirming",
  "deposit.credited",
  "deposit.expired",
  "deposit.under_review",
  "deposit.refunded",
  "deposit.cancelled",
  "deposit.top_up_requested",
] as const satisfies readonly EventType[];
// Fails to compile when the spec gains a type EVENT_TYPES lacks.
const everyEventType: [Exclude<EventType, (typeof EVENT_TYPES)[number]>] extends [never] ? true : false = true;
void everyEventType;

/** What openEventStream reads of one message of the stream (a MessageEvent in browsers). */
export interface StreamMessage {
  readonly data: string;
  readonly lastEventId: string;
}

/** What openEventStream needs of EventSource (the browser's, or a polyfill). */
export interface EventSourceLike {
  readonly readyState: number;
  addEventListener(type: string, listener: (event: StreamMessage) => void): void;
  onerror: ((event: Event) => void) | null;
  close(): void;
}
export type EventSourceConstructor = new (url: string, init?: { withCredentials?: boolean }) => EventSourceLike;

export interface EventStreamOptions {
  /** Origin of the API, as for createApiClient ("" for the page's own origin). */
  baseUrl: string;
  /** Called for every event, in order; `switch (event.type)` narrows `event.data`. */
  onEvent: (event: StreamEvent) => void;
  /** Resume after this event id (the last one a previous page saw); without it, only new events come. */
  lastEventId?: string | undefined;
  /** Called once when the stream stopped for good: the session ended (401) or the server refused it. */
  onClosed?: (() => void) | undefined;
  /** The EventSource to use; globalThis.EventSource by default. */
  EventSource?: EventSourceConstructor | undefined;
}

export interface EventStream {
  /** The id of the last event received: store it to resume on the next page. */
  readonly lastEventId: string | undefined;
  close(): void;
}

/**
 * Opens the signed-in user's live stream: their deposit events and their
 * organizations' creative events, with the session cookie. EventSource
 * reconnects by itself (sending Last-Event-ID, so nothing is missed) until
 * the session ends; then onClosed is called.
 */
export function openEventStream(options: EventStreamOptions): EventStream {
  return openStream("/api/v1/me/events", options);
}

/**
 * Opens a guest's live stream (after `api.guest.signIn`): the events of the
 * creatives of the guest's share that a guest may see (never a members'
 * internal comment, never a share event), with the guest session cookie.
 * It ends for good (onClosed) when the share is revoked or expires.
 */
export function openGuestEventStream(options: EventStreamOptions): EventStream {
  return openStream("/api/v1/guest/events", options);
}

function openStream(path: "/api/v1/me/events" | "/api/v1/guest/events", options: EventStreamOptions): EventStream {
  const Source = options.EventSource ?? (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
  if (!Source) throw new Error("openEventStream: no EventSource here; pass options.EventSource");
  let last = options.lastEventId;
  const query = last ? `?lastEventId=${encodeURIComponent(last)}` : "";
  const source = new Source(`${options.baseUrl}${path}${query}`, { withCredentials: true });
  let closed = false;
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (message) => {
      const payload = JSON.parse(message.data) as EventPayload;
      last = message.lastEventId;
      options.onEvent({ ...payload, id: message.lastEventId });
    });
  }
  source.onerror = () => {
    // EventSource.CLOSED: it will not reconnect (a 401, or another refusal).
    if (source.readyState === 2 && !closed) {
      closed = true;
      options.onClosed?.();
    }
  };
  return {
    get lastEventId() {
      return last;
    },
    close() {
      closed = true;
      source.close();
    },
  };
}

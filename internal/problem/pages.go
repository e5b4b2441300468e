package problem

import "sort"

// Page is what `GET /problems/<code>`, the `type` URL of a Problem, says
// about its code: what it means, when it happens and what to do.
// Adding a code adds its Page here; TestEveryCodeHasAPageAndASpecEntry
// holds the codes of titles, of Pages and of openapi.yaml equal.
type Page struct {
	// Status is the HTTP status the code comes with.
	Status int
	Means  string
	When   string
	Do     string
}

// Pages has the Page of every code.
var Pages = map[Code]Page{
	MalformedJSON: {400,
		"The body is not well-formed JSON, or an object in it repeats a member name.",
		"A command's body fails to parse: a truncated body, a trailing comma, a string where JSON was expected, or a duplicate member (parsers disagree on which copy wins, so it is refused).",
		"Send the body produced by a JSON encoder, with each member once. The detail says where parsing stopped."},
	Unauthenticated: {401,
		"The request carries no valid session.",
		"The session cookie is missing, expired (idle or absolute lifetime), signed out, or revoked by a password change. In a browser, a cookie the API set is also missing when the page's origin is cross-site to the API: the cookie is SameSite=Lax, so the browser keeps it from cross-site calls.",
		"Sign in again (POST /api/v1/auth/sign-in). In development, serve the frontend and the API under the same host name (localhost), or through the dev server's proxy; the server logs a warning for each allowed origin that is cross-site."},
	InvalidCredentials: {401,
		"The email and password of a sign-in do not match a user.",
		"A sign-in names an unknown email or the wrong password; both answer the same, so nobody learns which emails exist.",
		"Check the email and the password. Repeated failures lead to 429 too_many_attempts."},
	CSRFFailed: {403,
		"A state-changing request failed the request forgery check.",
		"An unsafe request (POST, PATCH, DELETE) with a session lacks the session's X-CSRF-Token header, sends a stale one, or comes from an origin that is neither PUBLIC_BASE_URL nor one of ALLOWED_ORIGINS.",
		"Send the csrfToken of the sign-in answer (or of GET /api/v1/me) in X-CSRF-Token; call from an allowed origin. The TypeScript client does both."},
	ActionForbidden: {403,
		"The caller may not do this: their role in the organization does not allow it.",
		"A viewer tries to write, an author to review, a member to act outside their own work, or the rights of the caller changed since the page loaded.",
		"Ask an admin of the organization for the role the action needs, or hide the action from this caller (GET /api/v1/me lists the memberships)."},
	NotFound: {404,
		"Nothing is there, or nothing the caller may see.",
		"An unknown path, an unknown id, or a resource of an organization the caller is no member of (answered the same, so ids of others leak nothing).",
		"Check the path and the id; a list endpoint shows what the caller can reach."},
	MethodNotAllowed: {405,
		"The path exists, but not with this method.",
		"A method the path does not serve, such as PUT on a path that takes PATCH.",
		"Use one of the methods the Allow header lists."},
	VersionConflict: {409,
		"The resource changed since the caller read it.",
		"A command's expectedVersion is not the resource's current version: someone else changed it in between.",
		"Read the resource again, check whether the change still makes sense, and send it with the new version."},
	InvalidTransition: {409,
		"The action is not allowed in the resource's current state.",
		"A review command that the state machine refuses from the current status, such as approving a draft or editing an archived creative.",
		"Read the resource's status; the detail names the status and the action. docs/review.md lists the allowed moves."},
	TooManyOpenDeposits: {409,
		"The user already has the maximum number of open deposit requests.",
		"A new deposit request while DEPOSIT_MAX_OPEN_PER_USER requests still await their transfer or are confirming.",
		"Pay or let expire an open request (GET /api/v1/me/balance/deposits lists them), then ask again."},
	IdempotencyKeyInUse: {409,
		"A request with this Idempotency-Key is still running.",
		"A repeat arrives while the first request with the same key has not finished (a double click, a retry sent too early).",
		"Retry after the Retry-After header's seconds: the repeat then gets the first request's answer."},
	RequestTooLarge: {413,
		"The request is larger than the server takes.",
		"A body over 64 KiB (413), or header fields over 32 KiB together (431, with this same code).",
		"Send a smaller body, or fewer or shorter headers (often: cookies piled up on the host name)."},
	UnsupportedMediaType: {415,
		"The body is not sent as application/json.",
		"A command with a body whose Content-Type is missing or not application/json.",
		"Send Content-Type: application/json."},
	InvalidRequest: {422,
		"The request does not match the API's schema.",
		"One or more fields are missing, of the wrong type or format, out of range, or unknown (unknown members are refused, so a typo never passes silently).",
		"Read fieldErrors: each names the field, a code (required, invalid_type, …) and a message. Fix them all at once: every failing field is listed."},
	IdempotencyKeyReused: {422,
		"This Idempotency-Key was already used for a different request.",
		"A key is reused with another body, path or caller within IDEMPOTENCY_TTL.",
		"Use a new key (a UUID) for each new command; reuse a key only to repeat the very same request."},
	TooManyAttempts: {429,
		"Too many failed sign-ins.",
		"Failed sign-ins for this email, or from this client address, passed their limit.",
		"Wait the Retry-After header's seconds before trying again."},
	RateLimited: {429,
		"Too many requests from this caller in the last minute.",
		"A user, token, guest or (signed out) client address sent more reads (RATE_LIMIT_READS_PER_MINUTE) or commands (RATE_LIMIT_COMMANDS_PER_MINUTE) in a minute than the server allows.",
		"Wait the Retry-After header's seconds. Every answer's RateLimit header says what remains (r) and when the budget is whole again (t): pace requests by it."},
	InternalError: {500,
		"The server failed unexpectedly.",
		"A bug. Nothing about it is in the answer.",
		"Retry later; report it with the traceId of the answer, under which the server logged what happened."},
	ServiceUnavailable: {503,
		"The server cannot answer now.",
		"The database is unreachable or slow (a timeout, a lock wait that ran out), the server is shutting down, or it serves its maximum of open event streams.",
		"Retry after the Retry-After header's seconds; the request did nothing, or a retry with the same Idempotency-Key gets its answer."},
	DepositsUnavailable: {503,
		"Deposits are not configured on this server.",
		"The server runs without TREASURY_ADDRESS.",
		"Operators: set TREASURY_ADDRESS (make run sets the development one). Clients: hide deposits while this answers."},
	DepositCapacityExhausted: {503,
		"No deposit of this amount can be opened now.",
		"Every matching suffix of the requested amount is reserved by other open deposits.",
		"Retry after Retry-After, or ask for a slightly different amount."},
	TooManyStreams: {429,
		"The user holds the maximum number of open event streams.",
		"A new GET /api/v1/me/events while STREAM_MAX_PER_USER streams of this user are open on the replica (often tabs left open, or a client that reconnects without closing).",
		"Close a stream (another tab) or reuse one per page; retry after Retry-After."},
	TransferUnknown: {409,
		"The chain watcher has not seen the transaction the claim names (yet).",
		"POST /api/v1/me/balance/deposits/{depositId}/claim names a transactionId that is not among the transfers to the treasury the watcher recorded: a transaction still on its way, or not a USDT transfer to the treasury at all.",
		"Check the transaction id in a block explorer; if it is a USDT transfer to the treasury, claim again after Retry-After with the same Idempotency-Key."},
	TransferTaken: {409,
		"The transaction is attached to another deposit, or already settled.",
		"A claim names a transfer that paid, or is claimed for, another deposit, or that an operator already credited, refunded or rejected.",
		"Check the transaction id; if it is yours and was taken by mistake, contact support with the deposit id and the transaction id."},
	OpenThreads: {409,
		"The creative has open threads not marked addressed.",
		"submit while top-level comments of any version are unresolved and the creative's author has not marked them addressed in a later version (addressedInVersion).",
		"Address each thread in openThreadIds (PATCH the comment with addressedInVersion) or resolve it, or submit with acknowledgeOpenThreads: true to go on anyway (the history records it)."},
	ShareLimit: {409,
		"The organization has as many live shares as it may have.",
		"POST …/shares while the organization has 100 shares that are neither revoked nor expired.",
		"Revoke a share no longer needed (DELETE …/shares/{shareId}) or wait for one to expire, then try again."},
	StorageQuotaExceeded: {409,
		"The organization's files would exceed its storage quota.",
		"A new upload whose sizeBytes, added to the organization's ready and pending uploads, is over ORG_STORAGE_QUOTA_BYTES.",
		"Delete or let expire unfinished uploads, or ask the operator for a larger quota; the detail gives the bytes in use."},
	UploadIncomplete: {409,
		"The upload cannot be completed: parts are missing in the object store.",
		"POST …/uploads/{uploadId}/complete before every part was PUT to its URL (or a part's size is not the one announced).",
		"GET the upload: it lists which parts arrived and gives fresh URLs for the others; send those, then complete again."},
	UploadMismatch: {422,
		"The stored file is not the one announced: its size, SHA-256 or file type differ.",
		"Completing an upload whose assembled object has another size or digest than sizeBytes and sha256, or whose first bytes are not of mimeType. The object is deleted and the upload is failed.",
		"Compute the SHA-256 and size of the file itself (the TypeScript client's uploadFile does), check its type, and start a new upload."},
	UploadsUnavailable: {503,
		"Uploads are not configured on this server.",
		"An upload operation on a server without an object store (no S3_BUCKET); the rest of the API works.",
		"Ask the operator to configure the S3_* variables; meanwhile versions can still name files by https URL."},
}

// Codes lists every code with a Page, sorted.
func Codes() []Code {
	out := make([]Code, 0, len(Pages))
	for c := range Pages {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

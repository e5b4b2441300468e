// Package problem defines the API's error vocabulary: the Problem body of
// every error answer, its stable codes, and the field errors of validation.
package problem

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"creativeapi/gen/api"
)

// Code is the machine-readable kind of a Problem.
type Code string

// The codes the API answers with. openapi.yaml documents each of them.
const (
	MalformedJSON            Code = "malformed_json"
	Unauthenticated          Code = "unauthenticated"
	InvalidCredentials       Code = "invalid_credentials"
	CSRFFailed               Code = "csrf_failed"
	ActionForbidden          Code = "action_forbidden"
	NotFound                 Code = "not_found"
	MethodNotAllowed         Code = "method_not_allowed"
	VersionConflict          Code = "version_conflict"
	InvalidTransition        Code = "invalid_transition"
	TooManyOpenDeposits      Code = "too_many_open_deposits"
	IdempotencyKeyInUse      Code = "idempotency_key_in_use"
	RequestTooLarge          Code = "request_too_large"
	UnsupportedMediaType     Code = "unsupported_media_type"
	InvalidRequest           Code = "invalid_request"
	IdempotencyKeyReused     Code = "idempotency_key_reused"
	TooManyAttempts          Code = "too_many_attempts"
	RateLimited              Code = "rate_limited"
	InternalError            Code = "internal_error"
	ServiceUnavailable       Code = "service_unavailable"
	DepositsUnavailable      Code = "deposits_unavailable"
	DepositCapacityExhausted Code = "deposit_capacity_exhausted"
	TooManyStreams           Code = "too_many_streams"
	StorageQuotaExceeded     Code = "storage_quota_exceeded"
	UploadIncomplete         Code = "upload_incomplete"
	UploadMismatch           Code = "upload_mismatch"
	UploadsUnavailable       Code = "uploads_unavailable"
	TransferUnknown          Code = "transfer_unknown"
	TransferTaken            Code = "transfer_taken"
	TooManyClaims            Code = "too_many_claims"
	OpenThreads              Code = "open_threads"
	ShareLimit               Code = "share_limit"
	ShareNotFound            Code = "share_not_found"
	SharePasswordRequired    Code = "share_password_required"
	InvalidToken             Code = "invalid_token"
	InsufficientScope        Code = "insufficient_scope"
	AmbiguousCredentials     Code = "ambiguous_credentials"
	ReviewPlanSet            Code = "review_plan_set"
	GuestUnverified          Code = "guest_unverified"
	CodeExpired              Code = "code_expired"
	MemberEmail              Code = "member_email"
	EmailQuotaExceeded       Code = "email_quota_exceeded"
	TooManyPendingUploads    Code = "too_many_pending_uploads"
	StorageUnavailable       Code = "storage_unavailable"
	TooManyTokens            Code = "too_many_tokens"
)

// FieldCode is the machine-readable kind of a field error (FieldError.code
// in openapi.yaml).
type FieldCode = api.FieldErrorCode

// The field error codes of docs/errors.md.
const (
	Required      = api.Required
	InvalidType   = api.InvalidType
	InvalidFormat = api.InvalidFormat
	InvalidValue  = api.InvalidValue
	OutOfRange    = api.OutOfRange
	TooShort      = api.TooShort
	TooLong       = api.TooLong
	UnknownField  = api.UnknownField
)

// FieldError is one failing field of a 422 invalid_request answer. Field is a
// dotted path with indexes (amount.amountMinor, items[0].formats) or the name
// of a header or parameter.
type FieldError = api.FieldError

// Error is an expected failure that becomes a Problem answer. Anything that
// returns an *Error decides the status and code; the writer adds type and
// traceId.
type Error struct {
	Status      int
	Code        Code
	Detail      string
	FieldErrors []FieldError
	// RetryAfter, in seconds, becomes the Retry-After header when positive.
	RetryAfter int
	// OpenThreadIds are open_threads' threads (the Problem's openThreadIds).
	OpenThreadIds []uuid.UUID
	// Challenge, when set, is the WWW-Authenticate header (RFC 6750's
	// bearer errors); a 401 without one gets the cookie challenge.
	Challenge string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail) }

// New returns an *Error with a detail formatted like fmt.Sprintf.
func New(status int, code Code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// MaxFieldErrors bounds the field errors of one answer, so a body of
// thousands of unknown fields does not get an answer several times its size.
const MaxFieldErrors = 100

// Invalid returns the 422 invalid_request error for the given field errors,
// the first MaxFieldErrors of them; the detail says when some were cut.
func Invalid(fields []FieldError) *Error {
	detail := "1 field failed validation. See fieldErrors."
	switch n := len(fields); {
	case n > MaxFieldErrors:
		detail = fmt.Sprintf("%d fields failed validation; fieldErrors lists the first %d.", n, MaxFieldErrors)
		fields = fields[:MaxFieldErrors:MaxFieldErrors]
	case n != 1:
		detail = fmt.Sprintf("%d fields failed validation. See fieldErrors.", n)
	}
	return &Error{Status: http.StatusUnprocessableEntity, Code: InvalidRequest, Detail: detail, FieldErrors: fields}
}

// Title is the fixed summary of a code; every occurrence of a code has the same title.
func Title(code Code) string {
	if t, ok := titles[code]; ok {
		return t
	}
	return "Error"
}

var titles = map[Code]string{
	MalformedJSON:            "Malformed JSON",
	Unauthenticated:          "Unauthenticated",
	InvalidCredentials:       "Invalid credentials",
	CSRFFailed:               "Request forgery check failed",
	ActionForbidden:          "Action forbidden",
	NotFound:                 "Not found",
	MethodNotAllowed:         "Method not allowed",
	VersionConflict:          "Version conflict",
	InvalidTransition:        "Invalid transition",
	TooManyOpenDeposits:      "Too many open deposits",
	IdempotencyKeyInUse:      "Idempotency key in use",
	RequestTooLarge:          "Request too large",
	UnsupportedMediaType:     "Unsupported media type",
	InvalidRequest:           "Invalid request",
	IdempotencyKeyReused:     "Idempotency key reused",
	TooManyAttempts:          "Too many attempts",
	RateLimited:              "Rate limited",
	InternalError:            "Internal error",
	ServiceUnavailable:       "Service unavailable",
	DepositsUnavailable:      "Deposits unavailable",
	DepositCapacityExhausted: "Deposit capacity exhausted",
	TooManyStreams:           "Too many streams",
	StorageQuotaExceeded:     "Storage quota exceeded",
	ShareLimit:               "Share limit reached",
	TooManyTokens:            "Too many tokens",
	ShareNotFound:            "Share not found",
	SharePasswordRequired:    "Share password required",
	UploadIncomplete:         "Upload incomplete",
	UploadMismatch:           "Upload mismatch",
	UploadsUnavailable:       "Uploads unavailable",
	TooManyPendingUploads:    "Too many pending uploads",
	StorageUnavailable:       "Object store unavailable",
	TransferUnknown:          "Transfer unknown",
	TransferTaken:            "Transfer taken",
	TooManyClaims:            "Too many claims",
	OpenThreads:              "Open threads",
	InvalidToken:             "Invalid token",
	InsufficientScope:        "Insufficient scope",
	AmbiguousCredentials:     "Ambiguous credentials",
	ReviewPlanSet:            "Review plan set",
	GuestUnverified:          "Guest unverified",
	CodeExpired:              "Code expired",
	MemberEmail:              "Member email",
	EmailQuotaExceeded:       "Email quota exceeded",
}

// Marshal renders e as openapi.yaml's Problem, the one place where a
// Problem's type URL and title are decided.
func Marshal(baseURL, traceID string, e *Error) []byte {
	body := api.Problem{
		Type:    baseURL + "/problems/" + string(e.Code),
		Title:   Title(e.Code),
		Status:  e.Status,
		Code:    string(e.Code),
		Detail:  e.Detail,
		TraceId: traceID,
	}
	if len(e.FieldErrors) > 0 {
		body.FieldErrors = &e.FieldErrors
	}
	if len(e.OpenThreadIds) > 0 {
		body.OpenThreadIds = &e.OpenThreadIds
	}
	b, err := json.Marshal(body)
	if err != nil {
		// Only strings and ints: marshalling cannot fail.
		panic(err)
	}
	return b
}

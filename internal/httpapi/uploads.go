package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
	"creativeapi/internal/upload"
)

// The upload handlers translate HTTP to internal/upload and back
// (docs/uploads.md).

// contentTTL is how long a download URL that getAssetContent redirects to
// stays valid.
const contentTTL = 5 * time.Minute

func uploadsPath(org uuid.UUID) string {
	return fmt.Sprintf("/api/v1/organizations/%s/uploads", org)
}

// uploadBodyChecks refuses a sizeBytes over UPLOAD_MAX_BYTES with the
// schema's errors, in one 422.
func (s *Server) uploadBodyChecks() map[string]gate.BodyCheck {
	limit := s.cfg.UploadMaxBytes
	return map[string]gate.BodyCheck{"createUpload": func(body any) []problem.FieldError {
		req, _ := body.(map[string]any)
		n, ok := req["sizeBytes"].(json.Number)
		if !ok {
			return nil // absent or not a number: the schema's to report
		}
		if size, err := n.Int64(); err == nil && size > limit {
			return []problem.FieldError{{Field: "sizeBytes", Code: problem.OutOfRange,
				Message: fmt.Sprintf("Must be at most %d bytes on this server.", limit)}}
		}
		return nil
	}}
}

// uploadProblem turns the upload service's refusals into Problems; the
// organization and the role are answered as for creatives.
func uploadProblem(err error) error {
	var incomplete *upload.Incomplete
	var mismatch *upload.Mismatch
	switch {
	case errors.Is(err, upload.ErrNotVisible):
		return problem.New(http.StatusNotFound, problem.NotFound, "No upload or asset with this id is visible to you in this organization.")
	case errors.Is(err, upload.ErrTooManyPending):
		return problem.New(http.StatusConflict, problem.TooManyPendingUploads,
			"A member holds at most %d pending uploads, of 2 GiB together, in an organization; complete, delete or let expire one of yours first.",
			upload.MaxPending)
	case errors.Is(err, upload.ErrQuotaExceeded):
		return problem.New(http.StatusConflict, problem.StorageQuotaExceeded, "The organization's uploads would pass its storage quota; delete files or ask for more.")
	case errors.Is(err, upload.ErrUnavailable):
		return problem.New(http.StatusServiceUnavailable, problem.UploadsUnavailable, "This server has no object store configured for uploads.")
	case errors.As(err, &incomplete):
		return problem.New(http.StatusConflict, problem.UploadIncomplete, "%s", incomplete.Reason)
	case errors.As(err, &mismatch):
		return problem.New(http.StatusUnprocessableEntity, problem.UploadMismatch, "%s The file was deleted; start a new upload.", mismatch.Reason)
	}
	return creativeProblem(err)
}

func (s *Server) uploadLimits() upload.Limits {
	return upload.NewLimits(s.cfg.OrgStorageQuotaBytes, s.cfg.UploadMaxBytes, s.cfg.UploadTTL, s.cfg.UploadURLTTL)
}

// CreateUpload starts an upload under the caller's Idempotency-Key.
func (s *Server) CreateUpload(ctx context.Context, r api.CreateUploadRequestObject) (api.CreateUploadResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	in := upload.NewUpload{FileName: r.Body.FileName, MimeType: string(r.Body.MimeType), SizeBytes: r.Body.SizeBytes, SHA256: r.Body.Sha256}
	return s.command(ctx, r.Params.IdempotencyKey, s.mayUpload(r.OrganizationId), func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
		v, err := upload.Create(ctx, q, s.objects, r.OrganizationId, caller.UserID, in, s.uploadLimits(), time.Now())
		if err != nil {
			return idempotency.Response{}, uploadProblem(err)
		}
		return s.uploadResponse(v, http.StatusCreated, uploadsPath(r.OrganizationId)+"/"+v.ID.String())
	})
}

// CompleteUpload assembles and checks an upload under the caller's
// Idempotency-Key.
func (s *Server) CompleteUpload(ctx context.Context, r api.CompleteUploadRequestObject) (api.CompleteUploadResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	// The store assembles the parts and the server reads the file before
	// the keyed command's transaction, which only records the outcome: no
	// transaction or row lock is held for the seconds a large file takes.
	a := upload.Assemble(ctx, s.store.Q, s.objects, r.OrganizationId, caller.UserID, r.UploadId, s.uploadLimits(), time.Now())
	return s.command(ctx, r.Params.IdempotencyKey, s.mayUpload(r.OrganizationId), func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
		v, err := upload.Complete(ctx, q.Queries, s.objects, r.OrganizationId, r.UploadId, a, time.Now())
		if err != nil {
			return idempotency.Response{}, uploadProblem(err)
		}
		return s.uploadResponse(v, http.StatusOK, "")
	})
}

// mayUpload is the replay check of the upload commands: a stored answer
// goes back only to a caller who may still upload to org (404 for one no
// longer a member, 403 for a role that may not), as the commands refuse.
func (s *Server) mayUpload(org uuid.UUID) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		caller, _ := requestctx.CallerFrom(ctx)
		if err := upload.MayUpload(ctx, s.store.Q, org, caller.UserID); err != nil {
			return uploadProblem(err)
		}
		return nil
	}
}

func (s *Server) uploadResponse(v upload.View, status int, location string) (idempotency.Response, error) {
	return idempotency.JSON(status, v.Answer(s.cfg.PublicBaseURL), location)
}

// GetUpload answers an upload with the parts the store holds.
func (s *Server) GetUpload(ctx context.Context, r api.GetUploadRequestObject) (api.GetUploadResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	v, err := upload.Get(ctx, s.store.Q, s.objects, r.OrganizationId, caller.UserID, r.UploadId, s.uploadLimits(), time.Now())
	if err != nil {
		return nil, uploadProblem(err)
	}
	return api.GetUpload200JSONResponse{Body: v.Answer(s.cfg.PublicBaseURL)}, nil
}

// DeleteUpload ends a pending upload at its creator's or an admin's
// request: the store drops its parts and refuses its URLs, and its
// reservation is freed.
func (s *Server) DeleteUpload(ctx context.Context, r api.DeleteUploadRequestObject) (api.DeleteUploadResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	err := s.store.InTx(ctx, func(q store.Tx) error {
		return upload.Delete(ctx, q.Queries, s.objects, r.OrganizationId, caller.UserID, r.UploadId)
	})
	if err != nil {
		return nil, uploadProblem(err)
	}
	return api.DeleteUpload204Response{}, nil
}

// GetAssetContent redirects a member to a short-lived download URL.
func (s *Server) GetAssetContent(ctx context.Context, r api.GetAssetContentRequestObject) (api.GetAssetContentResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	url, err := upload.Content(ctx, s.store.Q, s.objects, r.OrganizationId, caller.UserID, r.AssetId, contentTTL)
	if err != nil {
		return nil, uploadProblem(err)
	}
	noStore := "private, no-store"
	return api.GetAssetContent302Response{Headers: api.GetAssetContent302ResponseHeaders{CacheControl: &noStore, Location: &url}}, nil
}

// GetGuestAssetContent redirects a guest to a file of a creative of
// their share, as GetAssetContent does a member.
func (s *Server) GetGuestAssetContent(ctx context.Context, r api.GetGuestAssetContentRequestObject) (api.GetGuestAssetContentResponseObject, error) {
	g := guestOf(ctx)
	url, err := upload.GuestContent(ctx, s.store.Q, s.objects, g.ShareID, g.OrganizationID, r.AssetId, contentTTL)
	if err != nil {
		return nil, uploadProblem(err)
	}
	noStore := "private, no-store"
	return api.GetGuestAssetContent302Response{Headers: api.GetGuestAssetContent302ResponseHeaders{CacheControl: &noStore, Location: &url}}, nil
}

func (r rawJSON) VisitCreateUploadResponse(w http.ResponseWriter) error   { return r.write(w) }
func (r rawJSON) VisitCompleteUploadResponse(w http.ResponseWriter) error { return r.write(w) }

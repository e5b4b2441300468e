package upload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/directory"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// The refusals of the service, turned into Problems by the HTTP layer.
var (
	// ErrNotVisible: no such upload (or asset) in the organization.
	ErrNotVisible = errors.New("upload not visible")
	// ErrQuotaExceeded: the organization's uploads would pass its quota.
	ErrQuotaExceeded = errors.New("storage quota exceeded")
	// ErrTooManyPending: the uploader's pending uploads would pass their
	// limits (MaxPending, Limits.PendingBytes).
	ErrTooManyPending = errors.New("too many pending uploads")
	// ErrUnavailable: the server has no object store.
	ErrUnavailable = errors.New("uploads unavailable")
)

// Incomplete refuses to complete an upload whose parts are not all there.
type Incomplete struct{ Reason string }

func (e *Incomplete) Error() string { return "upload incomplete: " + e.Reason }

// Mismatch reports a stored file that is not the one announced.
type Mismatch struct{ Reason string }

func (e *Mismatch) Error() string { return "upload mismatch: " + e.Reason }

// Limits bound uploads.
type Limits struct {
	// QuotaBytes bounds an organization's ready and pending uploads;
	// PendingBytes one uploader's pending ones in an organization.
	QuotaBytes, PendingBytes int64
	// TTL is the longest a pending upload may take (UPLOAD_TTL); URLTTL
	// how long one of its part URLs works, and how long it waits for its
	// next part (UPLOAD_URL_TTL): see Expiry.
	TTL, URLTTL time.Duration
}

// NewUpload is a file a client announces.
type NewUpload struct {
	FileName, MimeType string
	SizeBytes          int64
	SHA256             string
}

// Part is a part as a client sees it. URL, ExpiresAt and Header (the
// headers its PUT must carry) are set for the uploader only.
type Part struct {
	Number    int32
	URL       *string
	ExpiresAt *time.Time
	Header    map[string]string
	Received  bool
}

// View is an upload with its parts.
type View struct {
	db.Upload
	Parts []Part
}

// ObjectKey is where an upload's checked file lives in the bucket: only
// the server writes it (a copy of the staged file, on completion), and
// /content serves only it.
func ObjectKey(org, id uuid.UUID) string { return "uploads/" + org.String() + "/" + id.String() }

// StagingKey is where the presigned URLs of the upload whose file lives
// at objectKey write: the object of a file PUT whole, or the multipart
// upload of one sent in parts. Nothing reads it but completion's copy.
func StagingKey(objectKey string) string { return "staging/" + objectKey }

// MayUpload checks that user may still upload to org, for the replay of
// a stored answer of an upload command: ErrOrganizationNotVisible (404)
// before a role refusal (403), as the commands answer.
func MayUpload(ctx context.Context, q *db.Queries, org, user uuid.UUID) error {
	return authorize(ctx, q, org, user)
}

// authorize checks that user may upload to org: ErrOrganizationNotVisible
// (404) before a role refusal (403).
func authorize(ctx context.Context, q *db.Queries, org, user uuid.UUID) error {
	role, err := directory.MemberRole(ctx, q, org, user)
	if err != nil {
		return err
	}
	return review.AuthorizeUploads(role)
}

// Create records a new upload, starting its multipart upload in the store
// when the file has several parts (a file of one part is PUT whole, and
// creating it calls no store). Its statements travel in three round
// trips, as a creative's creation's do (the role with BEGIN and the key's
// claim, the lock with the bytes used, the insert with the answer and
// COMMIT); the store's call, when there is one, is one more.
func Create(ctx context.Context, q store.Tx, objects *objectstore.Store, org, user uuid.UUID, in NewUpload, lim Limits, now time.Time) (View, error) {
	if err := authorize(ctx, q.Queries, org, user); err != nil {
		return View{}, err
	}
	if objects == nil {
		return View{}, ErrUnavailable
	}
	// The lock goes with the read of the reservations; the read still
	// runs once the lock is held, with a snapshot of its own. The lock
	// serialises the organization's creations, so its quota and each
	// uploader's pending limits hold under concurrent creates.
	if err := q.Next().OrganizationLockForUploads(ctx, org); err != nil {
		return View{}, err
	}
	res, err := q.UploadReservations(ctx, db.UploadReservationsParams{OrganizationID: org, CreatedBy: user, Now: now})
	if err != nil {
		return View{}, err
	}
	if err := (Reservations{OrganizationBytes: res.OrganizationBytes, UploaderPending: res.UploaderPending,
		UploaderPendingBytes: res.UploaderPendingBytes}).Admit(in.SizeBytes, lim); err != nil {
		return View{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return View{}, err
	}
	key := ObjectKey(org, id)
	partSize := PartSize(in.SizeBytes)
	// A file of one part is PUT whole to its staging object: no multipart
	// upload, so no call to the store here.
	var storeID *string
	if PartCount(in.SizeBytes, partSize) > 1 {
		id, err := objects.CreateMultipartUpload(ctx, StagingKey(key), in.MimeType)
		if err != nil {
			return View{}, err
		}
		storeID = &id
	}
	// The answer is the row as inserted, its times to the microsecond as
	// PostgreSQL keeps them, so that later reads show the same.
	now = now.Truncate(time.Microsecond)
	row := db.Upload{
		ID: id, OrganizationID: org, CreatedBy: user, Status: string(StatusPending), FileName: in.FileName,
		MimeType: in.MimeType, SizeBytes: in.SizeBytes, Sha256: in.SHA256, PartSize: partSize,
		ObjectKey: key, StoreUploadID: storeID, CreatedAt: now, ExpiresAt: Expiry(now, time.Time{}, lim),
	}
	// The insert goes with the stored answer and COMMIT; should it fail
	// there, abort drops the store's upload, which no row would name.
	abort := func(err error) error {
		if storeID != nil {
			_ = objects.AbortMultipartUpload(context.WithoutCancel(ctx), StagingKey(key), *storeID)
		}
		return err
	}
	if err := q.NextWrapped(abort).UploadInsert(ctx, db.UploadInsertParams{
		ID: id, OrganizationID: org, CreatedBy: user, FileName: in.FileName, MimeType: in.MimeType,
		SizeBytes: in.SizeBytes, Sha256: in.SHA256, PartSize: row.PartSize, ObjectKey: key,
		StoreUploadID: storeID, CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt,
	}); err != nil {
		return View{}, abort(err) // sent at once (a transaction without pipelining)
	}
	return view(ctx, objects, row, nil, user, lim.URLTTL, now)
}

// Get reads an upload, asking the store which parts arrived when pending;
// its uploader gets fresh URLs for the others, valid for lim.URLTTL but
// never past the upload's expiry, which the parts seen may move later
// (Expiry).
func Get(ctx context.Context, q *db.Queries, objects *objectstore.Store, org, user, id uuid.UUID, lim Limits, now time.Time) (View, error) {
	if err := authorize(ctx, q, org, user); err != nil {
		return View{}, err
	}
	row, err := q.UploadGet(ctx, db.UploadGetParams{OrganizationID: org, ID: id})
	if errors.Is(err, store.ErrNotFound) {
		return View{}, ErrNotVisible
	} else if err != nil {
		return View{}, err
	}
	if objects == nil {
		return View{}, ErrUnavailable
	}
	var received []objectstore.Part
	if mayLive(row, lim, now) {
		if row, received, err = observe(ctx, q, objects, row, lim); err != nil {
			return View{}, err
		}
	}
	return view(ctx, objects, row, received, user, lim.URLTTL, now)
}

// mayLive reports whether row may still be pending at now: pending, and
// either unexpired or expired so lately that a part the server has not
// seen yet may have moved its expiry (a URL never outlives the expiry it
// was signed under, so a part arrives at most then, and moves the expiry
// at most URLTTL past it), and never past TTL after its creation.
func mayLive(row db.Upload, lim Limits, now time.Time) bool {
	return Status(row.Status) == StatusPending && now.Before(row.ExpiresAt.Add(lim.URLTTL)) &&
		now.Before(row.CreatedAt.Add(lim.TTL))
}

// observe asks the store which parts of the pending row arrived, and
// records the expiry they give it (Expiry) when it is later than the one
// known: the upload's reservation ends then, and its URLs never outlive it.
func observe(ctx context.Context, q *db.Queries, objects *objectstore.Store, row db.Upload, lim Limits) (db.Upload, []objectstore.Part, error) {
	var received []objectstore.Part
	var err error
	if row.StoreUploadID == nil {
		received, err = wholeObject(ctx, objects, row)
	} else if received, err = objects.ListParts(ctx, StagingKey(row.ObjectKey), *row.StoreUploadID); errors.Is(err, objectstore.ErrNotFound) {
		// The multipart upload is gone: when a completion cut short
		// had the store assemble the file, every part arrived and
		// completing again finishes it (URLs for a vanished upload
		// would only fail); otherwise none did.
		received, err = assembledParts(ctx, objects, row)
	}
	if err != nil {
		return row, nil, err
	}
	var last time.Time
	for _, p := range received {
		if p.LastModified.After(last) {
			last = p.LastModified
		}
	}
	// The answer's times are to the microsecond, as PostgreSQL keeps them.
	if e := Expiry(row.CreatedAt, last, lim).Truncate(time.Microsecond); e.After(row.ExpiresAt) {
		if err := q.UploadExtend(ctx, db.UploadExtendParams{ID: row.ID, ExpiresAt: e}); err != nil {
			return row, nil, err
		}
		row.ExpiresAt = e
	}
	return row, received, nil
}

// wholeObject is the one part of a file PUT whole, when it arrived: staged,
// or already copied by a completion cut short.
func wholeObject(ctx context.Context, objects *objectstore.Store, row db.Upload) ([]objectstore.Part, error) {
	for _, key := range []string{StagingKey(row.ObjectKey), row.ObjectKey} {
		o, ok, err := objects.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if ok {
			return []objectstore.Part{{Number: 1, Size: o.Size, LastModified: o.LastModified}}, nil
		}
	}
	return nil, nil
}

// assembledParts is every part of row when its file is assembled in the
// store, none when it is not.
func assembledParts(ctx context.Context, objects *objectstore.Store, row db.Upload) ([]objectstore.Part, error) {
	var file objectstore.Object
	for _, key := range []string{StagingKey(row.ObjectKey), row.ObjectKey} {
		o, ok, err := objects.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if ok {
			file = o
			break
		}
	}
	if file.LastModified.IsZero() {
		return nil, nil
	}
	parts := make([]objectstore.Part, PartCount(row.SizeBytes, row.PartSize))
	for i := range parts {
		number := int32(i + 1)
		parts[i] = objectstore.Part{Number: number, Size: PartLength(row.SizeBytes, row.PartSize, number), LastModified: file.LastModified}
	}
	return parts, nil
}

// view lists row's parts as user sees them: for the uploader of a pending
// upload, fresh URLs for the parts not among received, valid for urlTTL
// but never past the upload's expiry. Nobody else gets a URL: a URL is a
// capability to write the upload's file (an admin sees the upload, not
// its URLs).
func view(ctx context.Context, objects *objectstore.Store, row db.Upload, received []objectstore.Part, user uuid.UUID, urlTTL time.Duration, now time.Time) (View, error) {
	n := PartCount(row.SizeBytes, row.PartSize)
	got := make(map[int32]bool, len(received))
	for _, p := range received {
		got[p.Number] = p.Size == PartLength(row.SizeBytes, row.PartSize, p.Number)
	}
	v := View{Upload: row, Parts: make([]Part, n)}
	pending := Status(row.Status) == StatusPending && row.ExpiresAt.After(now)
	// The URL's expiry is a whole second, as the signature's X-Amz-Expires.
	expires := now.Add(urlTTL)
	if row.ExpiresAt.Before(expires) {
		expires = row.ExpiresAt
	}
	ttl := expires.Sub(now).Truncate(time.Second)
	expires = now.Add(ttl)
	for i := range v.Parts {
		number := int32(i + 1)
		p := Part{Number: number, Received: got[number] || Status(row.Status) == StatusReady}
		if pending && !p.Received && user == row.CreatedBy && ttl > 0 {
			url, header, err := presignPart(ctx, objects, row, number, ttl)
			if err != nil {
				return View{}, err
			}
			p.URL, p.ExpiresAt, p.Header = &url, &expires, header
		}
		v.Parts[i] = p
	}
	return v, nil
}

// presignPart is the URL part number of row is PUT to, and the headers
// the PUT must carry: the staging object for a file PUT whole (its length
// and SHA-256 signed, so the URL writes the announced file or nothing),
// else the part of the multipart upload (its length signed). Either way
// the store refuses a body of another length, so the quota counts what a
// URL can write.
func presignPart(ctx context.Context, objects *objectstore.Store, row db.Upload, number int32, ttl time.Duration) (string, map[string]string, error) {
	length := PartLength(row.SizeBytes, row.PartSize, number)
	if row.StoreUploadID == nil {
		url, h, err := objects.PresignPut(ctx, StagingKey(row.ObjectKey), length, row.Sha256, ttl)
		if err != nil {
			return "", nil, err
		}
		header := make(map[string]string, len(h))
		for name := range h {
			header[strings.ToLower(name)] = h.Get(name)
		}
		return url, header, nil
	}
	url, err := objects.PresignUploadPart(ctx, StagingKey(row.ObjectKey), *row.StoreUploadID, number, length, ttl)
	return url, nil, err
}

// CompletionGrace is how long after a completion claimed an upload the
// expiry job leaves it alone: longer than any completion runs (a request
// is cut at REQUEST_TIMEOUT, 30 s by default; a 2 GiB file reads in about
// 15 s here).
const CompletionGrace = time.Hour

// Assembly is what Assemble found, for Complete to record.
type Assembly struct {
	// err is a refusal (or a failure) Complete answers.
	err error
	// checked: the stored file was read; mismatch says why it is not the
	// file announced ("" when it is), media what it said of itself.
	checked  bool
	mismatch string
	media    Media
}

// Assemble is the slow half of completing an upload, run outside any
// transaction (it takes seconds per GiB): it claims a pending upload
// (UploadClaimCompletion), checks that every part is in the store, has
// the store assemble them, and reads the object once, streaming, for its
// size, SHA-256, signature and dimensions. Complete then records the
// outcome in a short transaction. A completion cut short (the request's
// deadline, a crash) leaves the upload pending: a retry finds the object
// assembled and reads it again, and the expiry job deletes it if no retry
// comes.
func Assemble(ctx context.Context, q *db.Queries, objects *objectstore.Store, org, user, id uuid.UUID, lim Limits, now time.Time) Assembly {
	if err := authorize(ctx, q, org, user); err != nil {
		return Assembly{err: err}
	}
	row, err := q.UploadGet(ctx, db.UploadGetParams{OrganizationID: org, ID: id})
	if errors.Is(err, store.ErrNotFound) {
		return Assembly{err: ErrNotVisible}
	} else if err != nil {
		return Assembly{err: err}
	}
	if objects == nil {
		return Assembly{err: ErrUnavailable}
	}
	// Past its known expiry, parts sent since the server last looked may
	// have moved it later: look before calling it expired.
	if !row.ExpiresAt.After(now) && mayLive(row, lim, now) {
		if row, _, err = observe(ctx, q, objects, row, lim); err != nil {
			return Assembly{err: err}
		}
	}
	if Status(row.Status) != StatusPending || !row.ExpiresAt.After(now) {
		return Assembly{} // Complete answers from the status
	}
	row, err = q.UploadClaimCompletion(ctx, db.UploadClaimCompletionParams{OrganizationID: org, ID: id, Now: now})
	if errors.Is(err, store.ErrNotFound) {
		return Assembly{} // finished or expired since it was read
	} else if err != nil {
		return Assembly{err: err}
	}
	if err := assemble(ctx, objects, row); err != nil {
		return Assembly{err: err}
	}
	media, mismatch, err := check(ctx, objects, row)
	if err != nil {
		return Assembly{err: err}
	}
	return Assembly{checked: true, mismatch: mismatch, media: media}
}

// assemble has the store put row's parts together into its staging
// object, once every part arrived whole, and promotes it to the final
// key; a file PUT whole is its staging object already.
func assemble(ctx context.Context, objects *objectstore.Store, row db.Upload) error {
	staging := StagingKey(row.ObjectKey)
	if row.StoreUploadID == nil {
		return promote(ctx, objects, row)
	}
	parts, err := objects.ListParts(ctx, staging, *row.StoreUploadID)
	switch {
	case errors.Is(err, objectstore.ErrNotFound):
		// Assembled by an earlier completion cut short, or aborted.
		return promote(ctx, objects, row)
	case err != nil:
		return err
	}
	if missing := missingParts(row, parts); missing != "" {
		return &Incomplete{Reason: missing}
	}
	err = objects.CompleteMultipartUpload(ctx, staging, *row.StoreUploadID, parts)
	if err != nil && !errors.Is(err, objectstore.ErrNotFound) { // not found: a concurrent completion assembled it
		return err
	}
	return promote(ctx, objects, row)
}

// promote copies row's staged file to its final key, in the store, and
// deletes the staged one: the check that follows reads the final key,
// which no URL writes, so nothing sent after the check reaches what
// /content serves. What a staged file can hold is fixed before any copy
// (a multipart upload is assembled once; a file PUT whole has its length
// and SHA-256 signed into its URL), so concurrent completions copy the
// same bytes. A staged file already gone was promoted by a completion cut
// short (the final key holds it) or never arrived.
func promote(ctx context.Context, objects *objectstore.Store, row db.Upload) error {
	staging := StagingKey(row.ObjectKey)
	err := objects.Copy(ctx, staging, row.ObjectKey)
	if errors.Is(err, objectstore.ErrNotFound) {
		if ok, err := objects.Exists(ctx, row.ObjectKey); err != nil {
			return err
		} else if !ok {
			return &Incomplete{Reason: "The store holds no part of this upload."}
		}
		return nil
	}
	if err != nil {
		return err
	}
	return objects.Delete(ctx, staging)
}

// Complete records what Assemble found, holding the upload's row for a
// moment: a file that is not the one announced is deleted and the upload
// failed (a *Mismatch, which the caller commits); one that is becomes
// ready with its Asset. An upload already ready is answered as it is.
func Complete(ctx context.Context, q *db.Queries, objects *objectstore.Store, org, id uuid.UUID, a Assembly, now time.Time) (View, error) {
	if a.err != nil {
		return View{}, a.err
	}
	row, err := q.UploadGetForUpdate(ctx, db.UploadGetForUpdateParams{OrganizationID: org, ID: id})
	if errors.Is(err, store.ErrNotFound) {
		return View{}, ErrNotVisible
	} else if err != nil {
		return View{}, err
	}
	switch {
	case Status(row.Status) == StatusReady:
		return view(ctx, objects, row, nil, uuid.Nil, 0, now)
	case Status(row.Status) == StatusFailed && a.mismatch != "":
		return View{}, &Mismatch{Reason: a.mismatch} // a concurrent completion failed it
	case Status(row.Status) == StatusFailed:
		return View{}, &Incomplete{Reason: "The upload failed; start a new one."}
	case !a.checked:
		return View{}, &Incomplete{Reason: "The upload expired; start a new one."}
	}
	if a.mismatch != "" {
		if err := dispose(ctx, objects, row); err != nil {
			return View{}, err
		}
		if _, err := Decide(Status(row.Status), MoveReject); err != nil {
			return View{}, err
		}
		if _, err := q.UploadMarkFailed(ctx, db.UploadMarkFailedParams{ID: row.ID, Failure: &a.mismatch}); err != nil {
			return View{}, err
		}
		return View{}, &Mismatch{Reason: a.mismatch}
	}
	if _, err := Decide(Status(row.Status), MoveComplete); err != nil {
		return View{}, err
	}
	assetID, err := uuid.NewV7()
	if err != nil {
		return View{}, err
	}
	row, err = q.UploadMarkReady(ctx, db.UploadMarkReadyParams{
		ID: row.ID, AssetID: &assetID, Width: a.media.Width, Height: a.media.Height, DurationMs: a.media.DurationMs,
	})
	if err != nil {
		return View{}, err
	}
	return view(ctx, objects, row, nil, uuid.Nil, 0, now)
}

// missingParts says which parts are absent or of the wrong size; "" when
// all are there.
func missingParts(row db.Upload, parts []objectstore.Part) string {
	n := PartCount(row.SizeBytes, row.PartSize)
	have := make(map[int32]int64, len(parts))
	for _, p := range parts {
		have[p.Number] = p.Size
	}
	var missing []int32
	for number := int32(1); number <= n; number++ {
		if size, ok := have[number]; !ok || size != PartLength(row.SizeBytes, row.PartSize, number) {
			missing = append(missing, number)
		}
	}
	if len(missing) == 0 && len(parts) == int(n) {
		return ""
	}
	if len(missing) == 0 {
		return fmt.Sprintf("The store holds %d parts; this upload has %d.", len(parts), n)
	}
	return fmt.Sprintf("Parts missing or of the wrong size: %v (of %d).", missing, n)
}

// check reads the stored object once: its size, SHA-256 and first bytes.
func check(ctx context.Context, objects *objectstore.Store, row db.Upload) (Media, string, error) {
	body, _, err := objects.Open(ctx, row.ObjectKey)
	if err != nil {
		return Media{}, "", err
	}
	defer body.Close()
	h := sha256.New()
	head := &prefix{max: SniffLen}
	w := io.MultiWriter(h, head)
	var tail *suffix
	if row.MimeType == "video/mp4" {
		tail = &suffix{max: TailLen}
		w = io.MultiWriter(h, head, tail)
	}
	n, err := io.Copy(w, body)
	if err != nil {
		return Media{}, "", fmt.Errorf("read the stored file: %w", err)
	}
	switch {
	case n != row.SizeBytes:
		return Media{}, fmt.Sprintf("The stored file has %d bytes; %d were announced.", n, row.SizeBytes), nil
	case hex.EncodeToString(h.Sum(nil)) != row.Sha256:
		return Media{}, "The stored file's SHA-256 is not the one announced.", nil
	case !MatchesType(row.MimeType, head.b):
		return Media{}, fmt.Sprintf("The stored file does not start as a %s file does.", row.MimeType), nil
	}
	if tail != nil {
		return ProbeMP4(head.b, tail.bytes(), n), "", nil
	}
	return Probe(row.MimeType, head.b), "", nil
}

// prefix keeps the first max bytes written to it.
type prefix struct {
	b   []byte
	max int
}

func (p *prefix) Write(b []byte) (int, error) {
	if room := p.max - len(p.b); room > 0 {
		p.b = append(p.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// Content finds the stored file behind an asset of org that user may see
// and presigns its download for ttl.
func Content(ctx context.Context, q *db.Queries, objects *objectstore.Store, org, user, assetID uuid.UUID, ttl time.Duration) (string, error) {
	if _, err := directory.MemberRole(ctx, q, org, user); err != nil {
		return "", err
	}
	return presignContent(ctx, q, objects, org, assetID, ttl)
}

// GuestContent finds the stored file behind an asset of org that the
// share holds (a file of a version of one of its creatives) and presigns
// its download for ttl; any other asset is ErrNotVisible.
func GuestContent(ctx context.Context, q *db.Queries, objects *objectstore.Store, share, org, assetID uuid.UUID, ttl time.Duration) (string, error) {
	holds, err := q.ShareHoldsAsset(ctx, db.ShareHoldsAssetParams{ShareID: share, AssetID: assetID})
	switch {
	case err != nil:
		return "", err
	case !holds:
		return "", ErrNotVisible
	}
	return presignContent(ctx, q, objects, org, assetID, ttl)
}

// presignContent presigns the download of the stored file behind an asset
// of org, for a caller whose right to it is checked.
func presignContent(ctx context.Context, q *db.Queries, objects *objectstore.Store, org, assetID uuid.UUID, ttl time.Duration) (string, error) {
	row, err := q.UploadByAsset(ctx, db.UploadByAssetParams{OrganizationID: org, AssetID: &assetID})
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrNotVisible
	} else if err != nil {
		return "", err
	}
	if objects == nil {
		return "", ErrUnavailable
	}
	return objects.PresignGet(ctx, row.ObjectKey, row.FileName, row.MimeType, ttl)
}

// Expire aborts pending uploads past their expiry (the store deletes
// their parts), deletes the file of any whose completion assembled it but
// never finished, and fails them; it returns how many it looked at. One
// whose parts, seen now, move its expiry later (Expiry) is extended
// instead. An upload a completion claimed less than CompletionGrace ago
// waits for a later run. No URL of a failed one works any more (none
// outlives the expiry it was signed under), so its keys need no seal.
func Expire(ctx context.Context, s *store.Store, objects *objectstore.Store, lim Limits, now time.Time, limit int32) (int, error) {
	rows, err := s.Q.UploadExpired(ctx, db.UploadExpiredParams{Now: now, ClaimedBefore: now.Add(-CompletionGrace), RowLimit: limit})
	if err != nil {
		return 0, err
	}
	reason := "The upload expired before it was completed."
	for _, row := range rows {
		// A part sent since the server last looked may have moved the
		// expiry later: such an upload is extended, not failed.
		if mayLive(row, lim, now) {
			seen, _, err := observe(ctx, s.Q, objects, row, lim)
			if err != nil {
				return 0, err
			}
			if seen.ExpiresAt.After(now) {
				continue
			}
		}
		if _, err := Decide(Status(row.Status), MoveExpire); err != nil {
			return 0, err
		}
		// After the abort, no completion can assemble the file any more;
		// past the expiry, no URL of the upload works.
		if err := abort(ctx, objects, row); err != nil {
			return 0, err
		}
		if err := deleteFiles(ctx, objects, row); err != nil {
			return 0, err
		}
		if _, err := s.Q.UploadMarkFailed(ctx, db.UploadMarkFailedParams{ID: row.ID, Failure: &reason}); err != nil && !errors.Is(err, store.ErrNotFound) {
			return 0, err
		}
	}
	return len(rows), nil
}

// abort drops row's multipart upload, if any, and its parts. An upload
// created before staging (migration 0022) started it at the final key.
func abort(ctx context.Context, objects *objectstore.Store, row db.Upload) error {
	if row.StoreUploadID == nil {
		return nil
	}
	for _, key := range []string{StagingKey(row.ObjectKey), row.ObjectKey} {
		if err := objects.AbortMultipartUpload(ctx, key, *row.StoreUploadID); err != nil {
			return err
		}
	}
	return nil
}

// dispose empties row's keys while a URL of it may still work (a delete,
// a mismatch): it aborts its multipart upload, whose part URLs die with
// it, and deletes its final object; the staging object of a file PUT
// whole is replaced by a seal (objectstore.Seal), which its URL, which
// only creates, cannot write over. The staged bytes are gone at once; the
// sweep deletes the seal once the upload's expiry has passed.
func dispose(ctx context.Context, objects *objectstore.Store, row db.Upload) error {
	if err := abort(ctx, objects, row); err != nil {
		return err
	}
	if err := objects.Delete(ctx, row.ObjectKey); err != nil {
		return err
	}
	if row.StoreUploadID == nil {
		return objects.Seal(ctx, StagingKey(row.ObjectKey))
	}
	return objects.Delete(ctx, StagingKey(row.ObjectKey))
}

// Delete ends a pending upload of org at its creator's or an admin's
// request: its reservation is freed (it is failed), its multipart upload
// aborted and its keys emptied (dispose), so the store refuses its URLs,
// and it is gone from the API. The store's calls come before the row's
// move, under the row's lock: when the store fails, nothing changed. An
// upload that is not pending is refused (ready files belong to versions).
func Delete(ctx context.Context, q *db.Queries, objects *objectstore.Store, org, user, id uuid.UUID) error {
	role, err := directory.MemberRole(ctx, q, org, user)
	if err != nil {
		return err
	}
	if err := review.AuthorizeUploads(role); err != nil {
		return err
	}
	row, err := q.UploadGetForUpdate(ctx, db.UploadGetForUpdateParams{OrganizationID: org, ID: id})
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotVisible
	} else if err != nil {
		return err
	}
	if err := review.AuthorizeUploadDelete(role, row.CreatedBy == user); err != nil {
		return err
	}
	if _, err := Decide(Status(row.Status), MoveDelete); err != nil {
		return review.RefuseUploadDelete(row.Status)
	}
	if objects == nil {
		return ErrUnavailable
	}
	if err := dispose(ctx, objects, row); err != nil {
		return err
	}
	reason := "The upload was deleted."
	_, err = q.UploadMarkDeleted(ctx, db.UploadMarkDeletedParams{ID: row.ID, Failure: &reason})
	return err
}

// deleteFiles deletes row's staged and final objects.
func deleteFiles(ctx context.Context, objects *objectstore.Store, row db.Upload) error {
	for _, key := range []string{StagingKey(row.ObjectKey), row.ObjectKey} {
		if err := objects.Delete(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// Sweep empties the keys of finished uploads past their expiry, when no
// URL of theirs works any more (a URL never outlives its upload), and
// returns how many it swept: a failed upload's multipart upload, staged
// and final objects, and a ready one's staged object. A URL signed before
// an upload finished may still write its staging key until then (the
// announced bytes only: its length and, for a file PUT whole, SHA-256
// are signed), and nothing serves or counts that key; after the sweep
// nothing can write there again.
func Sweep(ctx context.Context, s *store.Store, objects *objectstore.Store, now time.Time, limit int32) (int, error) {
	rows, err := s.Q.UploadUnswept(ctx, db.UploadUnsweptParams{Now: now, RowLimit: limit})
	if err != nil {
		return 0, err
	}
	for _, row := range rows {
		if Status(row.Status) == StatusFailed {
			if err := abort(ctx, objects, row); err != nil {
				return 0, err
			}
			if err := deleteFiles(ctx, objects, row); err != nil {
				return 0, err
			}
		} else if err := objects.Delete(ctx, StagingKey(row.ObjectKey)); err != nil {
			return 0, err
		}
		if err := s.Q.UploadMarkSwept(ctx, row.ID); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

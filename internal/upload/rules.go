// Package upload holds the rules of uploaded files (docs/uploads.md): how
// a file is cut into parts, the moves of an upload's status, what a file's
// first bytes must be for its declared type, and what its bytes say of its
// dimensions. It knows no HTTP; service.go applies the rules to the
// database and the object store.
package upload

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for image.DecodeConfig
	_ "image/jpeg" // registers JPEG
	_ "image/png"  // registers PNG
	"time"

	_ "golang.org/x/image/webp" // registers WebP

	"creativeapi/internal/statemachine"
)

const (
	// MinPartSize is S3's smallest part but the last.
	MinPartSize = 5 << 20
	// DefaultPartSize keeps a 2 GiB file at 256 parts.
	DefaultPartSize = 8 << 20
	// MaxParts is S3's most parts in one upload.
	MaxParts = 10_000
)

// PartSize is the size of every part of a file of size bytes but the
// last: DefaultPartSize, or larger (whole MiB) when the file would need
// more than MaxParts.
func PartSize(size int64) int64 {
	p := int64(DefaultPartSize)
	if need := (size + MaxParts - 1) / MaxParts; need > p {
		p = (need + 1<<20 - 1) / (1 << 20) * (1 << 20)
	}
	return p
}

// PartCount is how many parts a file of size bytes is cut into.
func PartCount(size, partSize int64) int32 {
	if size <= partSize {
		return 1
	}
	return int32((size + partSize - 1) / partSize)
}

// PartLength is the size of part number (1-based).
func PartLength(size, partSize int64, number int32) int64 {
	n := PartCount(size, partSize)
	if number < n {
		return partSize
	}
	return size - partSize*int64(n-1)
}

// Status is an upload's status.
type Status string

const (
	StatusPending Status = "pending"
	StatusReady   Status = "ready"
	StatusFailed  Status = "failed"
)

// Move is a change of an upload's status.
type Move string

const (
	// MoveComplete: the stored file is the one announced.
	MoveComplete Move = "complete"
	// MoveReject: the stored file is not the one announced.
	MoveReject Move = "reject"
	// MoveExpire: the upload was still pending at its expiry.
	MoveExpire Move = "expire"
	// MoveDelete: its creator or an admin deleted the pending upload.
	MoveDelete Move = "delete"
)

// Actor is who moves an upload.
type Actor string

const (
	// ByCompletion: the completion that checks the stored file.
	ByCompletion Actor = "completion"
	// BySweeper: the sweep of uploads past their expiry.
	BySweeper Actor = "sweeper"
	// ByMember: the upload's creator or an admin.
	ByMember Actor = "member"
)

// Moves is every allowed move: from pending only, each to one status.
// TestEveryUploadMoveIsGuardedByItsStatement holds each statement's
// conditions to the rule's From and To.
var Moves = map[Move]statemachine.Rule[Status, Actor]{
	MoveComplete: {From: []Status{StatusPending}, To: []Status{StatusReady}, By: ByCompletion, Query: "UploadMarkReady"},
	MoveReject:   {From: []Status{StatusPending}, To: []Status{StatusFailed}, By: ByCompletion, Query: "UploadMarkFailed"},
	MoveExpire:   {From: []Status{StatusPending}, To: []Status{StatusFailed}, By: BySweeper, Query: "UploadMarkFailed"},
	MoveDelete:   {From: []Status{StatusPending}, To: []Status{StatusFailed}, By: ByMember, Query: "UploadMarkDeleted"},
}

// Decide is the status after m, or an error when m is not allowed from s.
func Decide(s Status, m Move) (Status, error) {
	r, ok := Moves[m]
	if !ok {
		return s, fmt.Errorf("upload: %q is not a move", m)
	}
	if !r.Applies(s) {
		return s, fmt.Errorf("upload: cannot %s an upload that is %s", m, s)
	}
	return r.To[0], nil
}

// The pending limits of one uploader in one organization (docs/uploads.md,
// "Pending uploads"): a member holds at most MaxPending uploads that are
// pending and not expired, of at most MaxPendingBytes together (or the
// server's largest upload, when larger, so that one such file fits).
const (
	MaxPending      = 20
	MaxPendingBytes = 2 << 30
)

// NewLimits are the limits of a server whose organizations hold quotaBytes
// and whose largest upload is maxUploadBytes, its uploads living ttl at
// most and urlTTL past their last part (UPLOAD_TTL, UPLOAD_URL_TTL).
func NewLimits(quotaBytes, maxUploadBytes int64, ttl, urlTTL time.Duration) Limits {
	return Limits{QuotaBytes: quotaBytes, PendingBytes: max(MaxPendingBytes, maxUploadBytes), TTL: ttl, URLTTL: urlTTL}
}

// Reservations is what an organization's uploads hold at a moment: the
// bytes of its ready and unexpired pending uploads, and the count and
// bytes of one uploader's unexpired pending uploads.
type Reservations struct {
	OrganizationBytes    int64
	UploaderPending      int32
	UploaderPendingBytes int64
}

// Admit is nil when a new upload of size bytes fits in r, else why not:
// ErrTooManyPending (the uploader's pending limits) before
// ErrQuotaExceeded (the organization's quota), the caller's own to free
// first.
func (r Reservations) Admit(size int64, lim Limits) error {
	switch {
	case r.UploaderPending >= MaxPending || r.UploaderPendingBytes+size > lim.PendingBytes:
		return ErrTooManyPending
	case r.OrganizationBytes+size > lim.QuotaBytes:
		return ErrQuotaExceeded
	}
	return nil
}

// Expiry is when a pending upload created at created, whose last part the
// store received at last (zero: none yet), expires: URLTTL after the later
// of the two, and never more than TTL after its creation. Its reservation
// ends then, and no URL of it outlives it.
func Expiry(created, last time.Time, lim Limits) time.Time {
	from := created
	if last.After(from) {
		from = last
	}
	return minTime(from.Add(lim.URLTTL), created.Add(lim.TTL))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// SniffLen is how many first bytes MatchesType and Probe read; enough for
// the image headers, and for a JPEG's frame header after common metadata.
const SniffLen = 256 << 10

// MatchesType reports whether a file starting with head is of type mime:
// its signature (magic bytes) is that type's.
func MatchesType(mime string, head []byte) bool {
	at := func(off int, sig string) bool {
		return len(head) >= off+len(sig) && string(head[off:off+len(sig)]) == sig
	}
	switch mime {
	case "image/png":
		return at(0, "\x89PNG\r\n\x1a\n")
	case "image/jpeg":
		return at(0, "\xff\xd8\xff")
	case "image/gif":
		return at(0, "GIF87a") || at(0, "GIF89a")
	case "image/webp":
		return at(0, "RIFF") && at(8, "WEBP")
	case "video/mp4":
		return at(4, "ftyp") && !at(8, "qt  ")
	case "video/quicktime":
		return at(4, "ftypqt  ") || at(4, "moov") || at(4, "mdat") || at(4, "wide") || at(4, "free")
	case "video/webm":
		return at(0, "\x1a\x45\xdf\xa3")
	case "application/zip":
		return at(0, "PK\x03\x04") || at(0, "PK\x05\x06")
	}
	return false
}

// Media is what a file's bytes say of it; nil where they say nothing.
type Media struct {
	Width, Height, DurationMs *int32
}

// Probe reads the dimensions of an image from its first bytes with the
// standard library's decoders (and x/image/webp); other types, or an image
// whose header does not decode, give an empty Media.
func Probe(mime string, head []byte) Media {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return Media{}
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(head))
	if err != nil || "image/"+format != mime || cfg.Width <= 0 || cfg.Height <= 0 {
		return Media{}
	}
	w, h := int32(cfg.Width), int32(cfg.Height)
	return Media{Width: &w, Height: &h}
}

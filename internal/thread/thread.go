// Package thread holds the rules of review comments that are about what a
// comment says and points at, not about who may write it (the rights are
// internal/review's): an anchor's geometry, an anchor's asset and time
// against the version commented on, one level of replies, mentions of
// members, and what deleting leaves behind. Each check reports every
// failing field at once, with the request's paths (`anchor.region.width`,
// `mentionUserIds[1]`). No HTTP, no SQL: the caller reads the facts.
package thread

import (
	"fmt"
	"strings"

	"github.com/google/uuid"

	"creativeapi/internal/problem"
)

// Region is a rectangle on an asset in fractions of its displayed width
// and height, from its top-left corner; a zero width and height mark a
// point.
type Region struct {
	X, Y, Width, Height float64
}

// TimeRange is a moment (End nil) or a span of a video, in milliseconds
// from its start.
type TimeRange struct {
	Start int64
	End   *int64
}

// Anchor is what a top-level comment points at: an asset of its version,
// and on it any of a region, a time, a page.
type Anchor struct {
	AssetID uuid.UUID
	Region  *Region
	TimeMs  *TimeRange
	Page    *int64
}

// New is a comment to write, as the rules read it.
type New struct {
	// VersionNumber is the version asked for; nil means the creative's
	// current one (or, for a reply, its parent's).
	VersionNumber  *int64
	ParentID       *uuid.UUID
	Anchor         *Anchor
	MentionUserIDs []uuid.UUID
}

// Geometry checks what an anchor says on its own: its region lies inside
// the frame (x + width ≤ 1, y + height ≤ 1; each bound alone is the
// schema's) and its time range does not end before it starts. A nil
// anchor passes.
func Geometry(a *Anchor) []problem.FieldError {
	if a == nil {
		return nil
	}
	var out []problem.FieldError
	if r := a.Region; r != nil {
		// A tiny tolerance keeps 0.7 + 0.3 (0.99999…) and its binary
		// neighbours inside the frame, as a user drawing to the edge meant.
		const edge = 1 + 1e-9
		if r.X+r.Width > edge {
			out = append(out, outOfRange("anchor.region.width", "Must keep the region inside the frame: x + width is at most 1."))
		}
		if r.Y+r.Height > edge {
			out = append(out, outOfRange("anchor.region.height", "Must keep the region inside the frame: y + height is at most 1."))
		}
	}
	if t := a.TimeMs; t != nil && t.End != nil && *t.End < t.Start {
		out = append(out, outOfRange("anchor.timeMs.end", "Must not be before start."))
	}
	return out
}

// Version is the version a comment is on, as found: nil when the number
// asked for names no version of the creative.
type Version struct {
	ID     uuid.UUID
	Number int64
}

// Parent is the comment a reply names, as found: nil when it is not a
// comment of this creative.
type Parent struct {
	// TopLevel is false when the parent is itself a reply.
	TopLevel bool
	Deleted  bool
	Version  Version
}

// Asset is an anchor's asset, as found: nil when it is not an asset of
// this creative.
type Asset struct {
	VersionID uuid.UUID
	MimeType  string
	// DurationMs is nil when the duration is not known.
	DurationMs *int64
}

// Facts are what the store found for a New.
type Facts struct {
	// Version is the version asked for (or the current one); nil when none.
	Version *Version
	Parent  *Parent
	Asset   *Asset
	// Members are the mentioned users who are members of the organization.
	Members map[uuid.UUID]bool
}

// Check judges a new comment against what it refers to, with Geometry, and
// returns the version it is on. Every failing field is reported:
//   - a reply's parent is a top-level comment of the creative, not
//     deleted (one level of replies); a reply is on its parent's version
//     and has no anchor;
//   - versionNumber names a version of the creative;
//   - the anchor's asset belongs to that version; a time is on a video
//     and ends within its duration when that is known;
//   - each mentioned user is a member of the organization.
func Check(n New, f Facts) (Version, []problem.FieldError) {
	out := Geometry(n.Anchor)
	var on Version
	switch {
	case n.ParentID != nil && f.Parent == nil:
		out = append(out, invalid("parentId", "Is not a comment of this creative."))
	case n.ParentID != nil && !f.Parent.TopLevel:
		out = append(out, invalid("parentId", "Is a reply: reply to the top-level comment of the thread (one level of replies)."))
	case n.ParentID != nil && f.Parent.Deleted:
		out = append(out, invalid("parentId", "Was deleted: a deleted thread takes no new replies."))
	case n.ParentID != nil:
		on = f.Parent.Version
		if n.VersionNumber != nil && *n.VersionNumber != on.Number {
			out = append(out, invalid("versionNumber", fmt.Sprintf("Must be %d, the version of the comment replied to, or be left out.", on.Number)))
		}
	case f.Version == nil:
		out = append(out, invalid("versionNumber", "Is not a version of this creative."))
	default:
		on = *f.Version
	}
	if n.ParentID != nil && n.Anchor != nil {
		out = append(out, invalid("anchor", "Only top-level comments have an anchor; a reply is about its thread's."))
	}
	if a := n.Anchor; a != nil && n.ParentID == nil {
		switch {
		case f.Asset == nil || (on != Version{} && f.Asset.VersionID != on.ID):
			out = append(out, invalid("anchor.assetId", "Is not an asset of the version commented on."))
		case a.TimeMs != nil && !strings.HasPrefix(f.Asset.MimeType, "video/"):
			out = append(out, invalid("anchor.timeMs", "Applies to videos only; this asset is "+f.Asset.MimeType+"."))
		case a.TimeMs != nil && f.Asset.DurationMs != nil:
			d := *f.Asset.DurationMs
			if a.TimeMs.Start > d {
				out = append(out, outOfRange("anchor.timeMs.start", fmt.Sprintf("Must be within the video's %d ms.", d)))
			}
			if a.TimeMs.End != nil && *a.TimeMs.End > d {
				out = append(out, outOfRange("anchor.timeMs.end", fmt.Sprintf("Must be within the video's %d ms.", d)))
			}
		}
	}
	for i, id := range n.MentionUserIDs {
		if !f.Members[id] {
			out = append(out, invalid(fmt.Sprintf("mentionUserIds[%d]", i), "Is not a member of this organization."))
		}
	}
	return on, out
}

// Deletion is what deleting a comment does.
type Deletion int

// The outcomes of Delete.
const (
	// Remove deletes the comment.
	Remove Deletion = iota
	// Tombstone keeps it, emptied and marked deleted, so its replies keep
	// their thread.
	Tombstone
)

// Delete says what deleting a comment does: a comment with replies stays
// as a tombstone, any other is removed. (A reply never has replies.)
func Delete(hasReplies bool) Deletion {
	if hasReplies {
		return Tombstone
	}
	return Remove
}

func invalid(field, msg string) problem.FieldError {
	return problem.FieldError{Field: field, Code: problem.InvalidValue, Message: msg}
}

func outOfRange(field, msg string) problem.FieldError {
	return problem.FieldError{Field: field, Code: problem.OutOfRange, Message: msg}
}

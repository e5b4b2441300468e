package thread

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func paths(t *testing.T, got []string) string {
	t.Helper()
	slices.Sort(got)
	return strings.Join(got, ", ")
}

func ptr[T any](v T) *T { return &v }

func TestAnchorGeometry(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		a    *Anchor
		want string
	}{
		{"no anchor", nil, ""},
		{"the asset as a whole", &Anchor{}, ""},
		{"a region inside the frame", &Anchor{Region: &Region{X: 0.1, Y: 0.2, Width: 0.5, Height: 0.5}}, ""},
		{"a region to the edges", &Anchor{Region: &Region{X: 0.7, Y: 0.9, Width: 0.3, Height: 0.1}}, ""},
		{"a point in the corner", &Anchor{Region: &Region{X: 1, Y: 1}}, ""},
		{"a region past the right edge", &Anchor{Region: &Region{X: 0.8, Width: 0.3, Height: 0.1}}, "anchor.region.width out_of_range"},
		{"a region past the bottom edge", &Anchor{Region: &Region{Y: 0.5, Width: 0.1, Height: 0.6}}, "anchor.region.height out_of_range"},
		{"past both edges: both reported", &Anchor{Region: &Region{X: 0.5, Y: 0.5, Width: 0.6, Height: 0.6}},
			"anchor.region.height out_of_range, anchor.region.width out_of_range"},
		{"a moment", &Anchor{TimeMs: &TimeRange{Start: 500}}, ""},
		{"a span", &Anchor{TimeMs: &TimeRange{Start: 500, End: ptr[int64](1500)}}, ""},
		{"an empty span", &Anchor{TimeMs: &TimeRange{Start: 500, End: ptr[int64](500)}}, ""},
		{"a span ending before it starts", &Anchor{TimeMs: &TimeRange{Start: 500, End: ptr[int64](499)}}, "anchor.timeMs.end out_of_range"},
		{"every failing field at once", &Anchor{Region: &Region{X: 0.9, Width: 0.2}, TimeMs: &TimeRange{Start: 2, End: ptr[int64](1)}},
			"anchor.region.width out_of_range, anchor.timeMs.end out_of_range"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range Geometry(tt.a) {
				got = append(got, f.Field+" "+string(f.Code))
			}
			if g := paths(t, got); g != tt.want {
				t.Errorf("Geometry: %q, want %q", g, tt.want)
			}
		})
	}
}

// TestACommentIsCheckedAgainstWhatItRefersTo covers reply depth, the
// anchor's asset and time against the version, and mentions.
func TestACommentIsCheckedAgainstWhatItRefersTo(t *testing.T) {
	t.Parallel()
	v1, v2 := Version{ID: uuid.New(), Number: 1}, Version{ID: uuid.New(), Number: 2}
	member, stranger := uuid.New(), uuid.New()
	image := &Asset{VersionID: v2.ID, MimeType: "image/png"}
	video := &Asset{VersionID: v2.ID, MimeType: "video/mp4", DurationMs: ptr[int64](15_000)}
	videoOfUnknownLength := &Asset{VersionID: v2.ID, MimeType: "video/webm"}
	oldImage := &Asset{VersionID: v1.ID, MimeType: "image/png"}
	parent := uuid.New()
	topLevel := &Parent{TopLevel: true, Version: v1}
	for _, tt := range []struct {
		name string
		n    New
		f    Facts
		on   Version
		want string
	}{
		{"a comment on the current version", New{}, Facts{Version: &v2}, v2, ""},
		{"a version that does not exist", New{VersionNumber: ptr[int64](9)}, Facts{}, Version{}, "versionNumber invalid_value"},
		{"reply depth: a reply to a top-level comment is on its version", New{ParentID: &parent}, Facts{Version: &v2, Parent: topLevel}, v1, ""},
		{"reply depth: naming the parent's version", New{ParentID: &parent, VersionNumber: ptr[int64](1)}, Facts{Version: &v1, Parent: topLevel}, v1, ""},
		{"reply depth: another version than the parent's", New{ParentID: &parent, VersionNumber: ptr[int64](2)}, Facts{Version: &v2, Parent: topLevel}, v1,
			"versionNumber invalid_value"},
		{"reply depth: a reply to a reply", New{ParentID: &parent}, Facts{Version: &v2, Parent: &Parent{Version: v1}}, Version{}, "parentId invalid_value"},
		{"reply depth: a parent of another creative", New{ParentID: &parent}, Facts{Version: &v2}, Version{}, "parentId invalid_value"},
		{"reply depth: a deleted parent", New{ParentID: &parent}, Facts{Version: &v2, Parent: &Parent{TopLevel: true, Deleted: true, Version: v1}}, Version{},
			"parentId invalid_value"},
		{"reply depth: a reply has no anchor", New{ParentID: &parent, Anchor: &Anchor{}}, Facts{Version: &v2, Parent: topLevel, Asset: oldImage}, v1,
			"anchor invalid_value"},
		{"an anchor on an asset of the version", New{Anchor: &Anchor{Region: &Region{Width: 1, Height: 1}}}, Facts{Version: &v2, Asset: image}, v2, ""},
		{"an anchor on an asset of another version", New{Anchor: &Anchor{}}, Facts{Version: &v2, Asset: oldImage}, v2, "anchor.assetId invalid_value"},
		{"an anchor on no asset of the creative", New{Anchor: &Anchor{}}, Facts{Version: &v2}, v2, "anchor.assetId invalid_value"},
		{"a time within the video", New{Anchor: &Anchor{TimeMs: &TimeRange{Start: 0, End: ptr[int64](15_000)}}}, Facts{Version: &v2, Asset: video}, v2, ""},
		{"a time past the video's end", New{Anchor: &Anchor{TimeMs: &TimeRange{Start: 15_001, End: ptr[int64](20_000)}}}, Facts{Version: &v2, Asset: video}, v2,
			"anchor.timeMs.end out_of_range, anchor.timeMs.start out_of_range"},
		{"a time on a video of unknown length", New{Anchor: &Anchor{TimeMs: &TimeRange{Start: 99_000}}}, Facts{Version: &v2, Asset: videoOfUnknownLength}, v2, ""},
		{"a time on an image", New{Anchor: &Anchor{TimeMs: &TimeRange{Start: 0}}}, Facts{Version: &v2, Asset: image}, v2, "anchor.timeMs invalid_value"},
		{"mentions of members", New{MentionUserIDs: []uuid.UUID{member}}, Facts{Version: &v2, Members: map[uuid.UUID]bool{member: true}}, v2, ""},
		{"a mention of a stranger, by its index", New{MentionUserIDs: []uuid.UUID{member, stranger}}, Facts{Version: &v2, Members: map[uuid.UUID]bool{member: true}}, v2,
			"mentionUserIds[1] invalid_value"},
		{"every failing field at once", New{Anchor: &Anchor{Region: &Region{X: 0.5, Width: 0.6}, TimeMs: &TimeRange{Start: 1}}, MentionUserIDs: []uuid.UUID{stranger}},
			Facts{Version: &v2, Asset: image}, Version{},
			"anchor.region.width out_of_range, anchor.timeMs invalid_value, mentionUserIds[0] invalid_value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			on, errs := Check(tt.n, tt.f)
			var got []string
			for _, f := range errs {
				got = append(got, f.Field+" "+string(f.Code))
			}
			if g := paths(t, got); g != tt.want {
				t.Errorf("Check: %q, want %q", g, tt.want)
			}
			if tt.want == "" && on != tt.on {
				t.Errorf("on version %+v, want %+v", on, tt.on)
			}
		})
	}
}

func TestTombstones(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		hasReplies bool
		want       Deletion
	}{
		{"a comment with replies stays as a tombstone", true, Tombstone},
		{"a comment without replies is removed", false, Remove},
	} {
		if got := Delete(tt.hasReplies); got != tt.want {
			t.Errorf("%s: Delete(%v) = %v, want %v", tt.name, tt.hasReplies, got, tt.want)
		}
	}
}

func TestBlankIsOnlySpacesAndFormatCharacters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    string
		want bool
	}{
		{"empty", "", true},
		{"ASCII spaces and line breaks", " \t\r\n ", true},
		{"an ideographic space (U+3000)", "\u3000", true},
		{"a zero-width space (U+200B)", "\u200b\u200b", true},
		{"a word joiner (U+2060)", "\u2060", true},
		{"a byte order mark (U+FEFF)", "\ufeff", true},
		{"a no-break space (U+00A0) and a line separator (U+2028)", "\u00a0\u2028", true},
		{"all of them at once", " \u3000\u200b\u2060\ufeff\n", true},
		{"a word among them", "\u200b ok \u3000", false},
		{"a dot", ".", false},
		{"an emoji", "\U0001F44D", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Blank(tc.s); got != tc.want {
				t.Errorf("Blank(%q) = %v, want %v", tc.s, got, tc.want)
			}
		})
	}
}

package creative_test

import (
	"slices"
	"testing"

	"creativeapi/internal/creative"
)

var (
	image  = creative.AssetFacts{MimeType: "image/png", HasWidth: true, HasHeight: true}
	video  = creative.AssetFacts{MimeType: "video/mp4", HasWidth: true, HasHeight: true, HasDuration: true}
	bundle = creative.AssetFacts{MimeType: "application/zip"}
)

func TestEachAssetHasWhatItsTypeNeeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		assets []creative.AssetFacts
		want   []string
	}{
		{"an image with its size, a video with size and duration, a bundle", []creative.AssetFacts{image, video, bundle}, nil},
		{"a bundle may give its size", []creative.AssetFacts{{MimeType: "application/zip", HasWidth: true, HasHeight: true}}, nil},
		{"an image needs width and height", []creative.AssetFacts{{MimeType: "image/jpeg"}}, []string{"assets[0].width required", "assets[0].height required"}},
		{"a video needs its duration", []creative.AssetFacts{image, {MimeType: "video/webm", HasWidth: true, HasHeight: true}}, []string{"assets[1].durationMs required"}},
		{"only a video has a duration", []creative.AssetFacts{{MimeType: "image/gif", HasWidth: true, HasHeight: true, HasDuration: true}, {MimeType: "application/zip", HasDuration: true}},
			[]string{"assets[0].durationMs invalid_value", "assets[1].durationMs invalid_value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range creative.CheckAssets(tt.assets) {
				got = append(got, f.Field+" "+string(f.Code))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAVersionFitsItsCreativesType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, kind string
		assets     []creative.AssetFacts
		want       []string
	}{
		{"static takes images", "static", []creative.AssetFacts{image, image}, nil},
		{"static takes images only", "static", []creative.AssetFacts{image, video, bundle}, []string{"assets[1].mimeType invalid_value", "assets[2].mimeType invalid_value"}},
		{"a video with a poster", "video", []creative.AssetFacts{video, image}, nil},
		{"a video needs a video", "video", []creative.AssetFacts{image}, []string{"assets invalid_value"}},
		{"a video takes no bundle", "video", []creative.AssetFacts{video, bundle}, []string{"assets[1].mimeType invalid_value"}},
		{"an html5 bundle with a backup image", "html5", []creative.AssetFacts{bundle, image}, nil},
		{"html5 needs a bundle", "html5", []creative.AssetFacts{image}, []string{"assets invalid_value"}},
		{"html5 needs exactly one bundle", "html5", []creative.AssetFacts{bundle, bundle}, []string{"assets invalid_value"}},
		{"html5 takes no video", "html5", []creative.AssetFacts{bundle, video}, []string{"assets[1].mimeType invalid_value"}},
		{"an unknown type takes nothing", "hologram", []creative.AssetFacts{image}, []string{"assets[0].mimeType invalid_value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range creative.FitType(tt.kind, tt.assets) {
				got = append(got, f.Field+" "+string(f.Code))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTitleSearchMatchesTheTextLiterally(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"sale":     "%sale%",
		"100%":     `%100\%%`,
		"a_b":      `%a\_b%`,
		`back\sla`: `%back\\sla%`,
	} {
		if got := creative.TitlePattern(text); got != want {
			t.Errorf("TitlePattern(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestOnlyTextsWithATrigramUseTheIndex(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"sale": true, "abc": true, "ab": false, "a b c": false, "%_%": false, "e 3": false, "été": true, "12a": true, "x-yz": false,
	} {
		if got := creative.Indexable(text); got != want {
			t.Errorf("Indexable(%q) = %v, want %v", text, got, want)
		}
	}
}

package creative

import (
	"fmt"
	"strings"

	"creativeapi/internal/problem"
)

// The asset rules openapi.yaml's schema cannot say, in two parts: what
// each asset needs given its own MIME type (CheckAssets, which the gate
// reports with the schema's errors), and what the creative's type asks of
// the version as a whole (FitType, once the creative is known). Paths name
// the request's fields with their index, assets[2].durationMs.

// AssetFacts is what the rules read of one asset of a request.
type AssetFacts struct {
	MimeType            string
	HasWidth, HasHeight bool
	HasDuration         bool
}

// Facts are the AssetFacts of assets.
func Facts(assets []NewAsset) []AssetFacts {
	out := make([]AssetFacts, len(assets))
	for i, a := range assets {
		out[i] = AssetFacts{MimeType: a.MimeType, HasWidth: a.Width != nil, HasHeight: a.Height != nil, HasDuration: a.DurationMs != nil}
	}
	return out
}

// assetKind is what an asset is to the rules, by its MIME type.
type assetKind int

const (
	otherKind assetKind = iota
	imageKind
	videoKind
	bundleKind
)

func kindOf(mime string) assetKind {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return imageKind
	case strings.HasPrefix(mime, "video/"):
		return videoKind
	case mime == "application/zip":
		return bundleKind
	}
	return otherKind
}

// CheckAssets applies what each asset needs by its own type: images have a
// width and a height; videos have both and a durationMs; only videos have
// a durationMs. It returns every failing field.
func CheckAssets(assets []AssetFacts) []problem.FieldError {
	var out []problem.FieldError
	for i, a := range assets {
		at := func(field string) string { return fmt.Sprintf("assets[%d].%s", i, field) }
		k := kindOf(a.MimeType)
		if k == imageKind || k == videoKind {
			what := "an image"
			if k == videoKind {
				what = "a video"
			}
			if !a.HasWidth {
				out = append(out, problem.FieldError{Field: at("width"), Code: problem.Required, Message: "Is required for " + what + "."})
			}
			if !a.HasHeight {
				out = append(out, problem.FieldError{Field: at("height"), Code: problem.Required, Message: "Is required for " + what + "."})
			}
		}
		switch {
		case k == videoKind && !a.HasDuration:
			out = append(out, problem.FieldError{Field: at("durationMs"), Code: problem.Required, Message: "Is required for a video."})
		case k != videoKind && a.HasDuration:
			out = append(out, problem.FieldError{Field: at("durationMs"), Code: problem.InvalidValue, Message: "Only a video has a duration; leave it out."})
		}
	}
	return out
}

// FitType applies what a creative of type kind asks of a version: a
// static creative takes images only; a video creative needs a video and
// may add images (a poster); an html5 creative needs exactly one
// application/zip bundle and may add images (a backup image).
func FitType(creativeType string, assets []AssetFacts) []problem.FieldError {
	var out []problem.FieldError
	mismatch := func(i int, msg string) {
		out = append(out, problem.FieldError{Field: fmt.Sprintf("assets[%d].mimeType", i), Code: problem.InvalidValue, Message: msg})
	}
	videos, bundles := 0, 0
	for i, a := range assets {
		k := kindOf(a.MimeType)
		switch creativeType {
		case "static":
			if k != imageKind {
				mismatch(i, "A static creative takes images only.")
			}
		case "video":
			if k != imageKind && k != videoKind {
				mismatch(i, "A video creative takes videos and images (a poster) only.")
			}
		case "html5":
			if k != imageKind && k != bundleKind {
				mismatch(i, "An html5 creative takes an application/zip bundle and images (a backup image) only.")
			}
		default:
			mismatch(i, fmt.Sprintf("A creative of type %q takes no assets.", creativeType))
		}
		switch k {
		case videoKind:
			videos++
		case bundleKind:
			bundles++
		}
	}
	switch {
	case creativeType == "video" && videos == 0:
		out = append(out, problem.FieldError{Field: "assets", Code: problem.InvalidValue,
			Message: "A video creative needs a video asset (video/mp4, video/webm or video/quicktime)."})
	case creativeType == "html5" && bundles != 1:
		out = append(out, problem.FieldError{Field: "assets", Code: problem.InvalidValue,
			Message: fmt.Sprintf("An html5 creative needs exactly one application/zip bundle, not %d.", bundles)})
	}
	return out
}

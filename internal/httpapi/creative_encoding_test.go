package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/creative"
	"creativeapi/internal/httpapi"
)

// TestCreativeEncodingIsTheGeneratedOneByteForByte proves that the
// hand-written encoding of creatives (creative.Detail) sends exactly the
// bytes the generated response would: a page written by the server, decoded
// strictly into api.CreativeList and written again by the generated
// ListCreatives200JSONResponse, is the same bytes, with every field set and
// with every nullable field null.
func TestCreativeEncodingIsTheGeneratedOneByteForByte(t *testing.T) {
	t.Parallel()
	full, nulled := httpapi.SampleCreative()
	cursor := "next"
	tests := []struct {
		name  string
		items []creative.Detail
		next  *string
	}{
		{"every field set", []creative.Detail{full}, &cursor},
		{"every nullable field null", []creative.Detail{nulled}, nil},
		{"an empty page", []creative.Detail{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours := httptest.NewRecorder()
			if err := httpapi.WriteCreativeList(ours, tt.items, tt.next); err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(ours.Body.Bytes()))
			dec.DisallowUnknownFields()
			var typed api.CreativeList
			if err := dec.Decode(&typed); err != nil {
				t.Fatalf("%s: %v", ours.Body, err)
			}
			generated := httptest.NewRecorder()
			if err := (api.ListCreatives200JSONResponse{Body: typed}).VisitListCreativesResponse(generated); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours.Body.Bytes(), generated.Body.Bytes()) {
				t.Errorf("the server wrote\n%s\nthe generated response writes\n%s", ours.Body, generated.Body)
			}
			if ours.Code != generated.Code || ours.Header().Get("Content-Type") != generated.Header().Get("Content-Type") {
				t.Errorf("status %d %q, the generated response: %d %q", ours.Code, ours.Header().Get("Content-Type"),
					generated.Code, generated.Header().Get("Content-Type"))
			}
		})
	}
}

// BenchmarkCreativePageEncoding writes a page of 20 creatives with every
// field set, as the server does (creative.Detail) and as the generated
// response type would (nullable.Nullable fields): the figure in
// creative.Detail's comment.
func BenchmarkCreativePageEncoding(b *testing.B) {
	full, _ := httpapi.SampleCreative()
	items := make([]creative.Detail, 20)
	for i := range items {
		items[i] = full
	}
	var typed api.CreativeList
	rec := httptest.NewRecorder()
	if err := httpapi.WriteCreativeList(rec, items, nil); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &typed); err != nil {
		b.Fatal(err)
	}
	typed.NextCursor = nullable.NewNullNullable[string]()
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := httpapi.WriteCreativeList(httptest.NewRecorder(), items, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := (api.ListCreatives200JSONResponse{Body: typed}).VisitListCreativesResponse(httptest.NewRecorder()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

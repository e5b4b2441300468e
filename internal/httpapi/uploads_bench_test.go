package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"creativeapi/internal/auth"
	"creativeapi/internal/testenv"
)

// uploadBench is a server with a store, an author's session and a ready
// upload of 20 parts' worth (a 150 MiB announcement: creating presigns 20
// part URLs).
type uploadBench struct {
	env               *testenv.Env
	cookie, csrf      string
	uploads, creative string
	creatives         string
	content           string
}

func newUploadBench(b *testing.B) *uploadBench {
	b.Helper()
	env := testenv.New(b, testenv.Options{Objects: true, Env: map[string]string{"LOG_LEVEL": "error", "ORG_STORAGE_QUOTA_BYTES": "4611686018427387904"}})
	org := env.DB.Org(b, "Bench Uploads")
	author, _ := env.DB.User(b, "Bench Author")
	env.DB.Member(b, org, author, "author")
	token, csrf := env.DB.Session(b, author)
	u := &uploadBench{env: env, csrf: csrf,
		cookie:    auth.SessionConfig{CookieSecure: env.Config.CookieSecure}.CookieName() + "=" + token,
		uploads:   env.Server.URL + uploadsURL(org),
		creatives: env.Server.URL + creativesURL(org),
		creative:  fmt.Sprintf("%s/api/v1/organizations/%s/creatives/%s", env.Server.URL, org, env.DB.DraftCreative(b, org, author)),
	}
	d := &uploadDesk{env: env, org: org, author: env.SessionFor(b, author)}
	file := pngFile(b, 4, 4, 200)
	up := d.createB(b, file)
	r := d.author.Do(http.MethodPost, uploadsURL(org)+"/"+up+"/complete", map[string]any{})
	var ready struct{ Asset struct{ URL string } }
	r.JSON(b, &ready)
	u.content = env.Server.URL + strings.TrimPrefix(ready.Asset.URL, env.Config.PublicBaseURL)
	return u
}

// createB is create and put for a benchmark's setup.
func (d *uploadDesk) createB(b *testing.B, file []byte) string {
	r := d.author.Do(http.MethodPost, uploadsURL(d.org), map[string]any{"fileName": "b.png", "mimeType": "image/png", "sizeBytes": len(file), "sha256": sha(file)})
	var out struct {
		ID    string
		Parts []struct {
			URL     string
			Headers map[string]string
		}
	}
	r.JSON(b, &out)
	req := mustRequest(b, http.MethodPut, out.Parts[0].URL, file)
	for name, value := range out.Parts[0].Headers {
		req.Header.Set(name, value)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("put: %v", err)
	}
	res.Body.Close()
	return out.ID
}

func mustRequest(b *testing.B, method, url string, body []byte) *http.Request {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	return req
}

func (u *uploadBench) do(b *testing.B, method, url string, body []byte, want int) {
	req := mustRequest(b, method, url, body)
	req.Header.Set("Cookie", u.cookie)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", u.csrf)
	}
	client := u.env.Server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("%s %s: %d", method, url, res.StatusCode)
	}
}

// BenchmarkUploadCosts compares the server CPU of creating an upload (a
// multipart upload in the store, 20 presigned part URLs) and of serving
// /content (a presigned GET) with a GET of a creative, and with creating a
// creative: the command without a store that an upload's creation is (a
// key claimed, a row written, the answer stored, one transaction). The
// store runs in its own process and is not counted.
func BenchmarkUploadCosts(b *testing.B) {
	u := newUploadBench(b)
	create := []byte(`{"fileName":"b.png","mimeType":"image/png","sizeBytes":157286400,"sha256":"` + strings.Repeat("a", 64) + `"}`)
	creative := []byte(`{"title":"Bench","type":"static","aspectRatio":"9:16","geo":"DE","language":"de-DE"}`)
	createOne := []byte(`{"fileName":"b.png","mimeType":"image/png","sizeBytes":1000,"sha256":"` + strings.Repeat("a", 64) + `"}`)
	for _, bc := range []struct {
		name, method, url string
		body              []byte
		want              int
	}{
		{"getCreative", http.MethodGet, u.creative, nil, http.StatusOK},
		{"getAssetContent", http.MethodGet, u.content, nil, http.StatusFound},
		{"createCreative", http.MethodPost, u.creatives, creative, http.StatusCreated},
		{"createUpload1Part", http.MethodPost, u.uploads, createOne, http.StatusCreated},
		{"createUpload20Parts", http.MethodPost, u.uploads, create, http.StatusCreated},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			defer testenv.ReportCPU(b)()
			for b.Loop() {
				u.do(b, bc.method, bc.url, bc.body, bc.want)
			}
		})
	}
}

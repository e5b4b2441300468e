package e2e_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"creativeapi/internal/seed"
	"creativeapi/internal/testenv"
)

// TestBrowserUploadsStraightToTheStore runs testdata/upload-browser.mjs:
// headless Chromium on a page of another origin uploads a 12 MiB file in
// two parts with the packaged client's uploadFile straight to the real S3
// server (its CORS lets the page's origin PUT and read ETag), part 2 fails
// once and is resumed, the upload becomes the version of an HTML5 creative
// ({uploadId}), and the version's file comes back through /content byte
// for byte; a PNG drawn on a canvas, one part, is PUT whole to its object
// and comes back ready with its dimensions.
func TestBrowserUploadsStraightToTheStore(t *testing.T) {
	t.Parallel()
	node, root := requireNode(t)
	browser := chromiumPath(t)

	// The page's origin: the compiled client, its two dependencies (an
	// import map names them) and the page.
	client := t.TempDir()
	runTool(t, root, nil, node, filepath.Join(root, "node_modules", "typescript", "bin", "tsc"),
		"-p", filepath.Join("clients", "typescript", "tsconfig.build.json"), "--outDir", client, "--declaration", "false")
	pageHTML, err := os.ReadFile(filepath.Join(root, "internal", "e2e", "testdata", "upload-page.html"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/client/", http.StripPrefix("/client/", http.FileServer(http.Dir(client))))
	mux.Handle("/m/", http.StripPrefix("/m/", http.FileServer(http.Dir(filepath.Join(root, "node_modules")))))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(pageHTML)
	})
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)

	env := testenv.New(t, testenv.Options{Objects: true, Env: map[string]string{"ALLOWED_ORIGINS": page.URL}})
	if err := seed.Run(t.Context(), env.DB.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), seed.Options{}); err != nil {
		t.Fatalf("seed the demo data: %v", err)
	}
	if strings.Split(page.URL, ":")[2] == strings.Split(env.Server.URL, ":")[2] {
		t.Fatal("the page and the API share an origin")
	}
	out := runTool(t, root, []string{
		"PAGE_URL=" + page.URL + "/",
		"API_URL=" + env.Server.URL,
		"CHROMIUM=" + browser,
		"USER_DATA_DIR=" + t.TempDir(),
		"NODE_OPTIONS=",
	}, node, filepath.Join("internal", "e2e", "testdata", "upload-browser.mjs"))
	t.Log(strings.TrimSpace(out))
}

package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tablePackage is an internal package as docs/architecture.md's package
// table names it: in backquotes, in the table's package column.
var tablePackage = regexp.MustCompile("`(internal/[^`]+)`")

// TestArchitectureListsEveryInternalPackage: the package table of
// docs/architecture.md names every package directory under internal/ (a
// directory holding Go files, testdata left out), and no package that does
// not exist, so the page a newcomer reads first says what the code is.
func TestArchitectureListsEveryInternalPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	text, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(text), "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 4 {
			continue
		}
		for _, m := range tablePackage.FindAllStringSubmatch(cells[2], -1) {
			if listed[m[1]] {
				t.Errorf("docs/architecture.md lists %s twice", m[1])
			}
			listed[m[1]] = true
		}
	}
	if len(listed) == 0 {
		t.Fatal("docs/architecture.md has no package table: the test would prove nothing")
	}

	present := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			present[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, p := range sortedKeys(present) {
		if !listed[p] {
			t.Errorf("%s is missing from the package table of docs/architecture.md: add it to its layer, saying what it is", p)
		}
	}
	for _, p := range sortedKeys(listed) {
		if !present[p] {
			t.Errorf("docs/architecture.md lists %s, which is no package under internal/", p)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestHandlersCallServicesNeverTheQueries: no file of internal/httpapi but
// its tests imports gen/db, so a handler reaches the database only through
// a service (docs/architecture.md, "The packages as layers").
func TestHandlersCallServicesNeverTheQueries(t *testing.T) {
	files, err := filepath.Glob("../httpapi/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no handlers found: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if imp.Path.Value == `"creativeapi/gen/db"` {
				t.Errorf("%s imports gen/db: call a service instead", filepath.Base(f))
			}
		}
	}
}

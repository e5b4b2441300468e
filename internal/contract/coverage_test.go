package contract_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"creativeapi/internal/httpapi"
)

// pair is one response the spec declares: an operation and a status code.
type pair struct {
	Operation, Method, Path, Status string
}

func (p pair) key() string { return p.Operation + " " + p.Status }

// TestEveryDeclaredResponseIsProven fails for every (operation, status) pair
// of openapi.yaml that no test produced and validated, so the spec cannot
// promise an answer nothing proves. The harness (internal/testenv) writes the
// pairs each test binary proved to $CONTRACT_PROVEN_DIR/proven-*.txt; this
// test reads their union, so it must run after the rest of the suite:
//
//	CONTRACT_PROVEN_DIR=$dir go test ./...
//	CONTRACT_PROVEN_DIR=$dir CONTRACT_CHECK=1 go test -count=1 ./internal/contract
//
// CONTRACT_CHECK keeps the first run (which includes this package, in
// parallel with the others) from judging a half-written directory. The report
// (pair → proven) goes to test-artifacts/contract.md.
func TestEveryDeclaredResponseIsProven(t *testing.T) {
	declared := declaredPairs(t)
	dir := os.Getenv("CONTRACT_PROVEN_DIR")
	if dir == "" || os.Getenv("CONTRACT_CHECK") != "1" {
		t.Skipf("%d declared (operation, status) pairs; coverage is checked by `make test` "+
			"(CONTRACT_PROVEN_DIR=dir go test ./..., then CONTRACT_CHECK=1 with the same dir)", len(declared))
	}
	proven, files := readProven(t, dir)
	if files == 0 {
		t.Fatalf("no proven-*.txt in CONTRACT_PROVEN_DIR=%s: run `go test ./...` with it set first", dir)
	}

	var missing []string
	for _, p := range declared {
		if _, ok := proven[p.key()]; !ok {
			missing = append(missing, fmt.Sprintf("%s %s (%s %s)", p.Operation, p.Status, p.Method, p.Path))
		}
	}
	report := writeReport(t, declared, proven, files)
	if len(missing) > 0 {
		t.Errorf("%d of %d declared (operation, status) pairs were never produced and validated by a test (report: %s):\n  %s",
			len(missing), len(declared), report, strings.Join(missing, "\n  "))
	}
}

// declaredPairs lists every response of every operation, sorted by path,
// method and status.
func declaredPairs(t *testing.T) []pair {
	t.Helper()
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var pairs []pair
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			}
			for status := range op.Responses.Map() {
				pairs = append(pairs, pair{Operation: op.OperationID, Method: method, Path: path, Status: status})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		a, b := pairs[i], pairs[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.Status < b.Status
	})
	return pairs
}

// readProven reads the union of the proven-*.txt files: lines of
// "operationId status", optionally followed by the names of the tests that
// proved the pair.
func readProven(t *testing.T, dir string) (proven map[string][]string, files int) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "proven-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	proven = map[string][]string{}
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 2 {
				continue
			}
			key := fields[0] + " " + fields[1]
			proven[key] = append(proven[key], fields[2:]...)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return proven, len(names)
}

// writeReport writes test-artifacts/contract.md (a table of every declared
// pair and whether a test proved it) and returns its path.
func writeReport(t *testing.T, declared []pair, proven map[string][]string, files int) string {
	t.Helper()
	var b strings.Builder
	n := 0
	for _, p := range declared {
		if _, ok := proven[p.key()]; ok {
			n++
		}
	}
	fmt.Fprintf(&b, "# Contract coverage\n\n%d of %d (operation, status) pairs declared in openapi.yaml were produced by the server and validated against it by a test (%d test binaries reported).\n\n", n, len(declared), files)
	b.WriteString("| operation | method and path | status | proven | by |\n| --- | --- | --- | --- | --- |\n")
	for _, p := range declared {
		tests, ok := proven[p.key()]
		mark := "no"
		if ok {
			mark = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s %s | %s | %s | %s |\n", p.Operation, p.Method, p.Path, p.Status, mark, provers(tests))
	}
	path, err := filepath.Abs(filepath.Join("..", "..", "test-artifacts", "contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// provers names up to three of the tests that proved a pair, shortest
// names first (the most direct tests), and how many more there are.
func provers(tests []string) string {
	seen := map[string]bool{}
	var names []string
	for _, name := range tests {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) < len(names[j])
		}
		return names[i] < names[j]
	})
	if len(names) > 3 {
		return fmt.Sprintf("%s, +%d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	return strings.Join(names, ", ")
}

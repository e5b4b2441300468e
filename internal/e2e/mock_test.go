package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mockBase is where the docs' mock examples find make mock's Prism.
const mockBase = "http://localhost:4010"

// expectedStatus is how a docs line names the status it prints.
var expectedStatus = regexp.MustCompile(`# → (\d{3})`)

// TestMockExamplesAnswerAsDocumented runs every shell block of the README
// and docs/ that calls make mock's Prism against a Prism mock of
// openapi.yaml, and checks that each line prints the status its
// `# → NNN` comment names: a Prefer header Prism no longer honours, or an
// example the spec no longer has, fails here instead of in a frontend
// developer's terminal.
func TestMockExamplesAnswerAsDocumented(t *testing.T) {
	t.Parallel()
	_, root := requireNode(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, f := range append([]string{filepath.Join(root, "README.md")}, files...) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range shellBlocks(string(text)) {
			if strings.Contains(b, mockBase) {
				blocks = append(blocks, b)
			}
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no mock example in README.md or docs/: the test would prove nothing")
	}
	base := runPrism(t, root, "mock", "openapi.yaml")
	for _, block := range blocks {
		var want []string
		for _, m := range expectedStatus.FindAllStringSubmatch(block, -1) {
			want = append(want, m[1])
		}
		out := runTool(t, root, nil, "sh", "-c", strings.ReplaceAll(block, mockBase, base))
		if got := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("the mock example printed %v, its comments say %v:\n%s", got, want, block)
		}
	}
}

// shellBlocks returns the bodies of the ```sh blocks of a Markdown text.
func shellBlocks(text string) []string {
	var blocks []string
	for {
		_, rest, ok := strings.Cut(text, "```sh\n")
		if !ok {
			return blocks
		}
		body, after, ok := strings.Cut(rest, "```")
		if !ok {
			return blocks
		}
		blocks = append(blocks, body)
		text = after
	}
}

// Package plan is what the benchmark orchestrator and the load generator
// exchange: one run's configuration in, its measured result out.
package plan

import "time"

// The scenarios a run can drive.
const (
	// Action alternates submit (author) and request_changes (reviewer) over
	// many creatives, each with a fresh Idempotency-Key.
	Action = "action"
	// Deposit creates deposits with a fresh Idempotency-Key and a varied amount.
	Deposit = "deposit"
	// Replay resends deposit creates whose key already holds an answer.
	Replay = "replay"
	// Get reads one creative; List reads the first page of creatives.
	Get  = "get"
	List = "list"
	// Create creates a draft creative with a fresh Idempotency-Key.
	Create = "create"
	// Version adds a one-image version to a draft creative with a fresh
	// Idempotency-Key, over many creatives.
	Version = "version"
	// Search reads the first page of a title search (q) for the last word
	// of a creative's title, as a user types the part of a title that
	// tells it apart.
	Search = "search"
	// The comment scenarios read, as a reviewer, a page of 20 of one
	// creative's comments (a thread of 200), that page filtered by
	// versionNumber and by resolved, and a page of 20 creatives with their
	// openCommentCount, in an organization whose comments the size sweep
	// grows around these same pages (Config.Path is the request).
	Comments          = "comments"
	CommentsByVersion = "comments-version"
	CommentsOpen      = "comments-open"
	CommentsCreatives = "comments-creatives"
)

// CommentScenarios are the comment scenarios: they run on their own size
// sweep, of comments in the table.
var CommentScenarios = []string{Comments, CommentsByVersion, CommentsOpen, CommentsCreatives}

// Session is a signed-in caller: the cookie's token and the CSRF token.
type Session struct {
	Token string `json:"token"`
	CSRF  string `json:"csrf"`
}

// Creative is a benchmark creative and its review status when the run starts.
type Creative struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Title  string `json:"title"`
}

// Config is one load generator run.
type Config struct {
	BaseURL  string        `json:"baseURL"`
	Scenario string        `json:"scenario"`
	Clients  int           `json:"clients"`
	Warmup   time.Duration `json:"warmup"`
	Duration time.Duration `json:"duration"`
	// CookieName is the session cookie's name (session without COOKIE_SECURE).
	CookieName string `json:"cookieName"`
	// Users sign deposits (and replays); Authors and Reviewers act on
	// creatives, one session per client.
	Users     []Session  `json:"users"`
	Authors   []Session  `json:"authors"`
	Reviewers []Session  `json:"reviewers"`
	Org       string     `json:"org"`
	Creatives []Creative `json:"creatives"`
	// Path is the comment scenarios' GET request.
	Path string `json:"path,omitempty"`
}

// Result is what a run measured, over its measured interval only.
type Result struct {
	Requests int `json:"requests"`
	// Sent counts every answered request, warm-up included: the load
	// generator's CPU time is divided by it.
	Sent    int           `json:"sent"`
	Errors  int           `json:"errors"`
	Elapsed time.Duration `json:"elapsed"`
	P50     time.Duration `json:"p50"`
	P99     time.Duration `json:"p99"`
	// FirstError describes one failed request, for the log.
	FirstError string `json:"firstError,omitempty"`
}

// Lines the load generator writes on stdout around its measured interval,
// so the orchestrator samples the server's counters at the same moments.
const (
	StartLine = "measure-start"
	EndLine   = "measure-end"
)

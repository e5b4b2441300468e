package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/testenv"
)

// commentsPerCreative is how the comments table grows in
// BenchmarkCommentListsAcrossTableSizes: by more creatives, each with this
// many comments (a third of them resolved, a fifth replies), as a
// workspace grows; the creative whose thread is read holds a fixed 200.
const commentsPerCreative = 50

// BenchmarkCommentListsAcrossTableSizes reads, with the comments table at
// each size of COMMENT_BENCH_SIZES (default "10,100000"; the sweep
// is "10,1000000"), a page of one creative's comments, the page filtered
// by versionNumber and by resolved, and a page of 20 creatives with their
// openCommentCount, through the real HTTP server. It reports the
// statements each request sends (statements/op): the same at every size,
// so none of them grows with the table, and openCommentCount costs no
// statement of its own.
//
//	COMMENT_BENCH_SIZES=10,1000000 go test -run '^$' -bench CommentLists -benchtime 200x ./internal/httpapi
func BenchmarkCommentListsAcrossTableSizes(b *testing.B) {
	sizes := []int{10, 100_000}
	if s := os.Getenv("COMMENT_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("COMMENT_BENCH_SIZES: %q", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("comments=%d", size), func(b *testing.B) {
			tracer := &testenv.RoundTrips{}
			env := testenv.New(b, testenv.Options{Tracer: tracer})
			org := env.DB.Org(b, "Bench Comments")
			user, _ := env.DB.User(b, "bench reviewer")
			env.DB.Member(b, org, user, "admin")
			target := seedComments(b, env, org, user, size)
			c := env.SessionFor(b, user)
			if os.Getenv("COMMENT_BENCH_EXPLAIN") != "" {
				explainCommentQueries(b, env, org, target)
			}
			for _, q := range []struct{ name, url string }{
				{"thread page", commentsURL(org, target) + "?limit=20"},
				{"by version", commentsURL(org, target) + "?limit=20&versionNumber=1"},
				{"open only", commentsURL(org, target) + "?limit=20&resolved=false"},
				{"creatives page with openCommentCount", creativesURL(org) + "?limit=20"},
			} {
				b.Run(q.name, func(b *testing.B) {
					trips := tracer.Record(func() {
						if r := c.Do(http.MethodGet, q.url, nil); r.Status != http.StatusOK {
							b.Fatalf("%s: %d %s", q.url, r.Status, r.Body)
						}
					})
					statements := 0
					for _, t := range trips {
						statements += len(strings.Split(t, "+"))
					}
					b.ResetTimer()
					for b.Loop() {
						if r := c.Do(http.MethodGet, q.url, nil); r.Status != http.StatusOK {
							b.Fatalf("%s: %d", q.url, r.Status)
						}
					}
					b.ReportMetric(float64(statements), "statements/op")
				})
			}
		})
	}
}

// seedComments fills the comments table with size comments, set-based:
// 200 on the creative it returns (the thread the benchmark reads), the rest
// commentsPerCreative to a creative, each creative with one version.
func seedComments(b *testing.B, env *testenv.Env, org, user uuid.UUID, size int) uuid.UUID {
	b.Helper()
	ctx := context.Background()
	// One connection without the pool's statement timeout: a million rows
	// take longer than a request may.
	conn, err := env.DB.Pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		b.Fatal(err)
	}
	target := min(size, 200)
	creatives := max(20, (size-target+commentsPerCreative-1)/commentsPerCreative)
	for _, sql := range []string{
		`INSERT INTO creatives (organization_id, number, title, type, aspect_ratio, geo, language, author_id)
		 SELECT $1, g, 'Bench ' || g, 'static', '1:1', 'DE', 'de-DE', $2 FROM generate_series(1, $3::int + 1) g`,
		`INSERT INTO creative_versions (creative_id, number, author_id) SELECT id, 1, $2 FROM creatives WHERE organization_id = $1`,
		`UPDATE creatives c SET current_version_id = v.id FROM creative_versions v WHERE v.creative_id = c.id AND c.organization_id = $1`,
		// Number 1 is the target; the others share the rest, in seq order
		// interleaved over the creatives as real comments are.
		`INSERT INTO comments (creative_id, version_id, version_number, author_id, body, resolved_by, resolved_at)
		 SELECT v.creative_id, v.id, 1, $2, 'Bench remark ' || g,
		        CASE WHEN g % 3 = 0 THEN $2::uuid END, CASE WHEN g % 3 = 0 THEN now() END
		 FROM generate_series(0, $4::int - 1) g
		 JOIN creatives c ON c.organization_id = $1
		      AND c.number = CASE WHEN g < $5::int THEN 1 ELSE 2 + (g - $5::int) % $3::int END
		 JOIN creative_versions v ON v.id = c.current_version_id`,
		// A fifth of the comments become replies of the top-level comment
		// before them on the same creative.
		`UPDATE comments r SET parent_id = p.id, resolved_by = NULL, resolved_at = NULL
		 FROM comments p
		 WHERE r.seq % 5 = 0 AND p.creative_id = r.creative_id AND p.seq < r.seq AND p.seq % 5 <> 0
		   AND p.seq = (SELECT max(seq) FROM comments x WHERE x.creative_id = r.creative_id AND x.seq < r.seq AND x.seq % 5 <> 0)`,
		// As autovacuum leaves a table at rest: statistics, and the
		// visibility map that lets openCommentCount count from its index
		// alone (without it every count reads the comments' heap pages).
		`VACUUM (ANALYZE) creatives, creative_versions, comments`,
	} {
		// Each statement takes the arguments up to the highest it names.
		args := []any{org, user, creatives, size, target}
		n := len(args)
		for n > 0 && !strings.Contains(sql, fmt.Sprintf("$%d", n)) {
			n--
		}
		if _, err := conn.Exec(ctx, sql, args[:n]...); err != nil {
			b.Fatalf("seed %d comments: %v\n%s", size, err, sql)
		}
	}
	if _, err := conn.Exec(ctx, "RESET statement_timeout"); err != nil {
		b.Fatal(err)
	}
	var id uuid.UUID
	if err := env.DB.Pool.QueryRow(ctx, "SELECT id FROM creatives WHERE organization_id = $1 AND number = 1", org).Scan(&id); err != nil {
		b.Fatal(err)
	}
	return id
}

// explainCommentQueries logs, for COMMENT_BENCH_EXPLAIN=1, the plan of
// each list's statement at this size with the buffers it read: the work a
// page does, which timings on a shared machine only hint at.
func explainCommentQueries(b *testing.B, env *testenv.Env, org, target uuid.UUID) {
	b.Helper()
	ctx := context.Background()
	for name, sql := range map[string]string{
		"thread page": `SELECT * FROM comments_shown WHERE creative_id = $1 AND seq > 0 AND $2::uuid IS NOT NULL ORDER BY seq LIMIT 21`,
		"by version":  `SELECT * FROM comments_shown WHERE creative_id = $1 AND version_number = 1 AND seq > 0 AND $2::uuid IS NOT NULL ORDER BY seq LIMIT 21`,
		"open only":   `SELECT * FROM comments_shown WHERE creative_id = $1 AND parent_id IS NULL AND resolved = false AND seq > 0 AND $2::uuid IS NOT NULL ORDER BY seq LIMIT 21`,
		"openCommentCount of a page of 20": `SELECT v.id, (SELECT count(*) FROM comments cm WHERE cm.version_id = v.id AND cm.parent_id IS NULL
			AND cm.resolved_at IS NULL AND NOT cm.deleted) FROM creative_versions v
			WHERE v.id = ANY(ARRAY(SELECT current_version_id FROM creatives WHERE organization_id = $2 ORDER BY number DESC LIMIT 20)) AND $1::uuid IS NOT NULL`,
	} {
		rows, err := env.DB.Pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+sql, target, org)
		if err != nil {
			b.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		b.Logf("%s:\n%s", name, strings.Join(plan, "\n"))
	}
}

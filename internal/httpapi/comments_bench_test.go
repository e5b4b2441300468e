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

	"creativeapi/internal/commentseed"
	"creativeapi/internal/testenv"
)

// BenchmarkCommentListsAcrossTableSizes reads, with the comments table at
// each size of COMMENT_BENCH_SIZES (default "1200,100000"; the issue's
// sweep is "1200,1000000"; seeded by internal/commentseed, which raises a
// smaller size to the 1,200 that hold the pages read, so every size reads
// the same pages), a page of one creative's thread of 200 comments, the
// page filtered by versionNumber and by resolved, and a page of 20
// creatives of 50 comments each with their openCommentCount, through the
// real HTTP server. It reports the
// statements each request sends (statements/op): the same at every size,
// so none of them grows with the table, and openCommentCount costs no
// statement of its own.
//
//	COMMENT_BENCH_SIZES=1200,1000000 go test -run '^$' -bench CommentLists -benchtime 200x ./internal/httpapi
func BenchmarkCommentListsAcrossTableSizes(b *testing.B) {
	sizes := []int{commentseed.Least, 100_000}
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
	// pages holds what each request answered at the first size: every size
	// must answer the same pages, or the sizes would not compare.
	pages := map[string]string{}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("comments=%d", commentseed.Size(size)), func(b *testing.B) {
			tracer := &testenv.RoundTrips{}
			env := testenv.New(b, testenv.Options{Tracer: tracer})
			org := env.DB.Org(b, "Bench Comments")
			user, _ := env.DB.User(b, "bench reviewer")
			env.DB.Member(b, org, user, "admin")
			target, err := commentseed.Seed(context.Background(), env.DB.Pool, org, user, size)
			if err != nil {
				b.Fatal(err)
			}
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
					var page string
					trips := tracer.Record(func() {
						r := c.Do(http.MethodGet, q.url, nil)
						if r.Status != http.StatusOK {
							b.Fatalf("%s: %d %s", q.url, r.Status, r.Body)
						}
						page = pageShape(b, r)
					})
					if first, ok := pages[q.name]; !ok {
						pages[q.name] = page
					} else if page != first {
						b.Fatalf("%s: at %d comments the page is %s, at the first size %s", q.name, commentseed.Size(size), page, first)
					}
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

// pageShape is what a list page holds, apart from ids and times: its
// comments' bodies, resolved and reply flags, or its creatives'
// openCommentCount. A page that is not full fails the benchmark.
func pageShape(b *testing.B, r *testenv.Response) string {
	b.Helper()
	var page struct {
		Items []struct {
			Body             string
			Resolved         bool
			ParentID         *string `json:"parentId"`
			OpenCommentCount *int
		}
	}
	r.JSON(b, &page)
	if len(page.Items) != 20 {
		b.Fatalf("a page of %d items, not 20: the seed does not fill it", len(page.Items))
	}
	var shape []string
	for _, it := range page.Items {
		if it.OpenCommentCount != nil {
			shape = append(shape, strconv.Itoa(*it.OpenCommentCount))
		} else {
			shape = append(shape, fmt.Sprintf("%s/%t/%t", it.Body, it.Resolved, it.ParentID != nil))
		}
	}
	return strings.Join(shape, ",")
}

// explainCommentQueries logs, for COMMENT_BENCH_EXPLAIN=1, the plan of
// each list's statement at this size with the buffers it read: the work a
// page does, which timings on a shared machine only hint at. The plans are
// the generic ones, with parameters, as the server's prepared statements
// come to use.
func explainCommentQueries(b *testing.B, env *testenv.Env, org, target uuid.UUID) {
	b.Helper()
	ctx := context.Background()
	conn, err := env.DB.Pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	var versions string
	if err := conn.QueryRow(ctx, `SELECT ARRAY(SELECT current_version_id FROM creatives
		WHERE organization_id = $1 ORDER BY number DESC LIMIT 20)::text`, org).Scan(&versions); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(ctx, "DEALLOCATE ALL; RESET plan_cache_mode") }()
	for i, q := range []struct{ name, sql, args string }{
		{"thread page", `SELECT * FROM comments_shown WHERE creative_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
			fmt.Sprintf("'%s', 0, 21", target)},
		{"by version", `SELECT * FROM comments_shown WHERE creative_id = $1 AND version_number = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
			fmt.Sprintf("'%s', 1, 0, 21", target)},
		{"open only", `SELECT * FROM comments_shown WHERE creative_id = $1 AND parent_id IS NULL AND resolved = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
			fmt.Sprintf("'%s', false, 0, 21", target)},
		{"openCommentCount of a page of 20", `SELECT v.id, (SELECT count(*) FROM comments cm WHERE cm.version_id = v.id AND cm.parent_id IS NULL
			AND cm.resolved_at IS NULL AND NOT cm.deleted) FROM creative_versions v WHERE v.id = ANY($1::uuid[])`,
			fmt.Sprintf("'%s'", versions)},
	} {
		name := fmt.Sprintf("explain%d", i)
		if _, err := conn.Exec(ctx, fmt.Sprintf("PREPARE %s AS %s", name, q.sql)); err != nil {
			b.Fatal(err)
		}
		rows, err := conn.Query(ctx, fmt.Sprintf("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE %s(%s)", name, q.args))
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
		b.Logf("%s:\n%s", q.name, strings.Join(plan, "\n"))
	}
}

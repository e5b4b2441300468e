package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/bench/internal/plan"
	"creativeapi/internal/commentseed"
)

// commentThread is the organization the comment scenarios read at the
// current comment size, and the creative whose thread they page through.
type commentThread struct {
	org, creative string
}

// commentSweep runs the comment scenarios at the size sweep's concurrency
// with the comments table at each of -comment-sizes: each step seeds a
// fresh organization with that many comments (internal/commentseed, as the
// Go benchmark does), the bench reviewer a member of it.
func (b *bench) commentSweep(ctx context.Context) error {
	for _, size := range b.opts.commentSizes {
		step(fmt.Sprintf("seed %d comments", size))
		start := time.Now()
		var org, user uuid.UUID
		err := b.pool.QueryRow(ctx, `
			WITH o AS (INSERT INTO organizations (name, slug) VALUES ($1, $2) RETURNING id)
			INSERT INTO memberships (organization_id, user_id, role)
			SELECT o.id, u.id, 'reviewer' FROM o, users u WHERE u.email = 'reviewer@acme.test'
			RETURNING organization_id, user_id`,
			"Bench comments "+strconv.Itoa(size), "bench-comments-"+strconv.Itoa(size)).Scan(&org, &user)
		if err != nil {
			return fmt.Errorf("the comments' organization: %w", err)
		}
		creative, err := commentseed.Seed(ctx, b.pool, org, user, size)
		if err != nil {
			return err
		}
		if err := analyze(ctx, b.pool, commentTables, b.opts.prewarm); err != nil {
			return err
		}
		b.report.commentsSeeded = append(b.report.commentsSeeded, seedTime{size, time.Since(start)})
		b.thread = commentThread{org: org.String(), creative: creative.String()}
		for _, sc := range b.opts.commentScenarios {
			if err := b.measure(ctx, size, sc, b.opts.sizeClients, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// path is the request of a comment scenario.
func (t commentThread) path(scenario string) string {
	creatives := "/api/v1/organizations/" + t.org + "/creatives"
	thread := creatives + "/" + t.creative + "/comments?limit=20"
	switch scenario {
	case plan.CommentsByVersion:
		return thread + "&versionNumber=1"
	case plan.CommentsOpen:
		return thread + "&resolved=false"
	case plan.CommentsCreatives:
		return creatives + "?limit=20"
	}
	return thread
}

// defaultCommentSizes are the comment size sweep's steps: the smallest
// table that holds what the scenarios read, and a million comments.
var defaultCommentSizes = fmt.Sprintf("%d,1000000", commentseed.Least)

// commentTableSizes are the comments the sweep's steps put in the table
// (commentseed.Size: a smaller size is raised to the smallest that holds
// the pages read, so every step reads the same pages), in the order given,
// each once.
func commentTableSizes(sizes []int) []int {
	var out []int
	for _, s := range sizes {
		if n := commentseed.Size(s); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// commentSweepText introduces the comment size sweep's table.
var commentSweepText = fmt.Sprintf("Rows: comments in the table, a fifth of them replies, a third of the rest resolved; each step an organization of its own. "+
	"Every step reads the same pages, so that only the table's size changes: the reviewer reads a page of 20 of one creative's thread of %d comments (`comments`), "+
	"filtered by `versionNumber` (`comments-version`) and by `resolved=false` (`comments-open`), and the organization's first page of %d creatives, %d comments each, with their `openCommentCount` (`comments-creatives`); "+
	"the rest of the table is %d comments to each older creative (`internal/commentseed`; a step smaller than %s rows is raised to it). "+
	"Statements: pg_stat_statements' count per request sent, the job queue's polling left out.",
	commentseed.Target, commentseed.ListPage, commentseed.PerCreative, commentseed.PerCreative, rows(commentseed.Least))

// commentTargets writes the comment scenarios' rows of the targets table:
// at most 1.2× slower (throughput) at the largest size than at the
// smallest, with the same statements per request; the CPU per request
// (server and database) beside it, which the machine's other tenants move
// less than the throughput.
func (r *report) commentTargets(b *strings.Builder) {
	sizes := r.opts.commentSizes
	if len(sizes) < 2 {
		return
	}
	first, last := sizes[0], sizes[len(sizes)-1]
	for _, sc := range r.opts.commentScenarios {
		a, z := r.find(first, sc, r.opts.sizeClients), r.find(last, sc, r.opts.sizeClients)
		if a == nil || z == nil || z.server.Rate == 0 {
			continue
		}
		slower := a.server.Rate / z.server.Rate
		cpu := float64(z.server.ServerCPU+z.server.DBCPU) / float64(max(a.server.ServerCPU+a.server.DBCPU, 1))
		flat := math.Abs(z.server.Statements-a.server.Statements) < 0.05
		fmt.Fprintf(b, "| %s ≤ 1.2× slower at %s rows than at %s, statements per request flat | %.2f× (%.0f vs %.0f /s), statements %.2f vs %.2f, server+DB CPU per request %.2f× | %s |\n",
			sc, rows(last), rows(first), slower, a.server.Rate, z.server.Rate, a.server.Statements, z.server.Statements, cpu, yes(slower <= 1.2 && flat))
	}
}

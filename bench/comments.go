package main

import (
	"context"
	"fmt"
	"strconv"
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
		if err := analyze(ctx, b.pool); err != nil {
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

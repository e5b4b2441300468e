// Package commentseed fills the comments table to a given size for the
// benchmarks that measure the comment lists against it: the Go benchmark
// in internal/httpapi and the size sweep of the bench command.
package commentseed

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PerCreative is how the comments table grows: by more creatives, each with
// this many comments (a third of them resolved, a fifth replies), as a
// workspace grows; the creative whose thread is read holds a fixed Target.
const (
	PerCreative = 50
	Target      = 200
)

// Seed adds size comments to org, set-based: min(size, Target) on the
// creative it returns (number 1, the thread a benchmark reads), the rest
// PerCreative to a creative, each creative (at least 20, so a list page is
// full) with one version authored by user. org must hold no creatives yet.
func Seed(ctx context.Context, pool *pgxpool.Pool, org, user uuid.UUID, size int) (uuid.UUID, error) {
	// One connection without the pool's statement timeout: a million rows
	// take longer than a request may.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return uuid.Nil, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return uuid.Nil, err
	}
	defer func() { _, _ = conn.Exec(ctx, "RESET statement_timeout") }()
	target := min(size, Target)
	creatives := max(20, (size-target+PerCreative-1)/PerCreative)
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
			return uuid.Nil, fmt.Errorf("seed %d comments: %w\n%s", size, err, sql)
		}
	}
	var id uuid.UUID
	err = conn.QueryRow(ctx, "SELECT id FROM creatives WHERE organization_id = $1 AND number = 1", org).Scan(&id)
	return id, err
}

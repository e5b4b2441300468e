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

// The comments table grows by more creatives, each with PerCreative
// comments (a fifth of them replies, a third of the rest resolved), as a
// workspace grows. What a benchmark reads is the same at every size, so
// that the size of the table is the only thing that changes: the creative whose
// thread it pages through holds Target comments, and the first page of
// ListPage creatives (the newest) PerCreative each. Least is the smallest
// table that holds them.
const (
	PerCreative = 50
	Target      = 200
	ListPage    = 20
	Least       = Target + ListPage*PerCreative
)

// Size is the number of comments Seed puts in the table for size: at least
// Least, and Target more than a multiple of PerCreative, so that every
// creative but the thread holds PerCreative.
func Size(size int) int {
	rest := max(size, Least) - Target
	return Target + (rest+PerCreative-1)/PerCreative*PerCreative
}

// Seed adds Size(size) comments to org, set-based: Target on the creative
// it returns (number 1, the thread a benchmark reads), the rest
// PerCreative to a creative, each creative with one version authored by
// user. org must hold no creatives yet.
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
	size = Size(size)
	creatives := (size - Target) / PerCreative
	for _, sql := range []string{
		`INSERT INTO creatives (organization_id, number, title, type, aspect_ratio, geo, language, author_id)
		 SELECT $1, g, 'Bench ' || g, 'static', '1:1', 'DE', 'de-DE', $2 FROM generate_series(1, $3::int + 1) g`,
		`INSERT INTO creative_versions (creative_id, number, author_id) SELECT id, 1, $2 FROM creatives WHERE organization_id = $1`,
		`UPDATE creatives c SET current_version_id = v.id FROM creative_versions v WHERE v.creative_id = c.id AND c.organization_id = $1`,
		// Number 1 is the target; the others share the rest, in seq order
		// interleaved over the creatives as real comments are. Every
		// creative's comments follow one pattern by their index j on it,
		// whatever the size: each fifth (j % 5 = 4) a reply of the one
		// before, a third of the top-level ones (j % 3 = 0) resolved.
		`WITH s AS MATERIALIZED (
		     SELECT gen_random_uuid() AS id, g, v.creative_id, v.id AS version_id,
		            CASE WHEN g < $5::int THEN g ELSE (g - $5::int) / $3::int END AS j
		     FROM generate_series(0, $4::int - 1) g
		     JOIN creatives c ON c.organization_id = $1
		          AND c.number = CASE WHEN g < $5::int THEN 1 ELSE 2 + (g - $5::int) % $3::int END
		     JOIN creative_versions v ON v.id = c.current_version_id)
		 INSERT INTO comments (id, creative_id, version_id, version_number, parent_id, author_id, body, resolved_by, resolved_at)
		 SELECT id, creative_id, version_id, 1, CASE WHEN j % 5 = 4 THEN lag(id) OVER w END, $2, 'Bench remark ' || j,
		        CASE WHEN j % 5 <> 4 AND j % 3 = 0 THEN $2::uuid END, CASE WHEN j % 5 <> 4 AND j % 3 = 0 THEN now() END
		 FROM s
		 WINDOW w AS (PARTITION BY creative_id ORDER BY g)
		 ORDER BY g`,
		// As autovacuum leaves a table at rest: statistics, and the
		// visibility map that lets openCommentCount count from its index
		// alone (without it every count reads the comments' heap pages).
		`VACUUM (ANALYZE) creatives, creative_versions, comments`,
	} {
		// Each statement takes the arguments up to the highest it names.
		args := []any{org, user, creatives, size, Target}
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
